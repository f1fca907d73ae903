/**
 * Core's tokenizer on the generated model, through its child process: tokens round-trip, the model's ChatML
 * template is applied, calls pipeline, a 1 MB text does not stall this process, and a tokenizer child that
 * crashes or hangs under a call gives that call a clear error while the next call is served by a restarted
 * child.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokenizer, TokenizerError, TokenizerUnavailableError } from '../../core/tokenizer.js';
import { startEngine, testModelPath } from '../helpers/engines.js';

let tokenizer: Tokenizer;
beforeAll(async () => {
  tokenizer = await Tokenizer.open(testModelPath());
});
afterAll(async () => {
  await tokenizer.dispose();
});

describe('tokenizer', () => {
  it('round-trips text, including characters outside the vocabulary through byte fallback', async () => {
    const text = 'hello the world, naïve café ✓';
    const tokens = await tokenizer.tokenize(text);
    expect(tokens.length).toBeGreaterThan(5);
    expect((await tokenizer.detokenize(tokens)).trim()).toBe(text);
    // Merged pieces make common words shorter than their letters.
    expect((await tokenizer.tokenize(' the model')).length).toBeLessThan(' the model'.length);
  });

  it("applies the model's chat template with control tokens and the generation prompt", async () => {
    expect(tokenizer.hasModelTemplate).toBe(true);
    const { text, tokens } = await tokenizer.applyChatTemplate([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
    ]);
    expect(text).toBe('<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n');
    const imStart = await tokenizer.tokenize('<|im_start|>', { special: true });
    expect(imStart).toHaveLength(1);
    expect(tokens.filter((t) => t === imStart[0])).toHaveLength(3);
    // Without special parsing the same text is ordinary characters.
    expect((await tokenizer.tokenize('<|im_start|>')).length).toBeGreaterThan(1);
    // BOS: the model asks for it, so a completion prompt and a templated chat start with it.
    expect(tokens[0]).toBe(1);
    expect((await tokenizer.tokenizePrompt('hello'))[0]).toBe(1);
    expect((await tokenizer.tokenize('hello'))[0]).not.toBe(1);
  });

  it('serves pipelined calls, each answered with its own result', async () => {
    const texts = Array.from({ length: 20 }, (_, i) => `the model ${i}${' x'.repeat(i)}`);
    const all = await Promise.all(texts.map((t) => tokenizer.tokenize(t)));
    const one = await Promise.all(texts.map(async (t) => tokenizer.detokenize(await tokenizer.tokenize(t))));
    expect(one.map((t) => t.trim())).toEqual(texts);
    expect(all).toEqual(await Promise.all(texts.map((t) => tokenizer.tokenize(t))));
  });

  it("tokenizes a 1 MB text in the child while this process's event loop keeps turning", async () => {
    const text = 'hello the world of models and tokens. '.repeat(27_000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    const tokens = await tokenizer.tokenize(text);
    const ms = performance.now() - started;
    clearInterval(timer);
    expect(tokens.length).toBeGreaterThan(200_000);
    // Tokenized in this process, the loop could not turn until the native call returned.
    expect(ticks).toBeGreaterThan(3);
    console.log(`1 MB (${tokens.length} tokens) in ${Math.round(ms)} ms; the event loop turned ${ticks} times meanwhile`);
  });

  it('feeds an engine: a templated prompt generates', async () => {
    const engine = await startEngine({ slots: 1, contextSize: 256 });
    const { tokens } = await tokenizer.applyChatTemplate([{ role: 'user', content: 'write code' }]);
    const done = await engine.generate({ tokens, maxTokens: 4, ignoreEos: true }).done;
    expect(done.usage.promptTokens).toBe(tokens.length);
    expect(done.completionTokens).toHaveLength(4);
  });

  it('refuses a file that is not a GGUF with a clear error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifold-tok-'));
    try {
      const path = join(dir, 'x.gguf');
      await writeFile(path, 'not a model at all');
      const error = await Tokenizer.open(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TokenizerError);
      expect((error as Error).message).toContain(`${path} failed validation`);
      expect((error as Error).message).toContain('not a GGUF file');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a child killed under a call fails that call clearly; the next call is served by a restarted child', async () => {
    const logs: string[] = [];
    const crashing = await Tokenizer.open(testModelPath(), { log: (line) => logs.push(line) });
    try {
      const firstPid = crashing.pid;
      // Stopped first, so the call is still unanswered when the kill lands: on a busy machine the child, woken by
      // the request, could otherwise answer it before core's next line runs (CI saw it once).
      crashing.signal('SIGSTOP');
      const inFlight = crashing.tokenize('hello the world '.repeat(1000));
      crashing.signal('SIGKILL');
      const error = await inFlight.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TokenizerUnavailableError);
      expect((error as Error).message).toMatch(/^the tokenizer process exited \(code none, signal SIGKILL\) while serving this call/);
      expect(await crashing.tokenize('hello')).toEqual(await tokenizer.tokenize('hello'));
      expect(crashing.pid).not.toBe(firstPid);
      expect(logs.some((l) => l.includes('exited: crashed (code none, signal SIGKILL)'))).toBe(true);
    } finally {
      await crashing.dispose();
    }
  }, 180_000);

  it('a hung child is killed after the hang bound and restarted; past the restart cap the tokenizer stays down', async () => {
    // 5 s: far above what a short call takes even on a busy machine, so only the stopped child is hung.
    const hanging = await Tokenizer.open(testModelPath(), { hangTimeoutMs: 5000, maxRestarts: 1, restartWindowMs: 600_000 });
    try {
      hanging.signal('SIGSTOP');
      const error = await hanging.tokenize('hello').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TokenizerUnavailableError);
      expect((error as Error).message).toMatch(/^the tokenizer process hung \(no answer for \d+ ms\) and was killed/);
      expect((await hanging.tokenize('hello')).length).toBeGreaterThan(0);
      // One restart is the cap: the next failure leaves it down, and calls say so.
      hanging.signal('SIGKILL');
      await expect(hanging.tokenize('hello')).rejects.toThrow(TokenizerUnavailableError);
      await expect(hanging.tokenize('hello')).rejects.toThrow(/failed 2 times within 600 s and is not restarted/);
    } finally {
      await hanging.dispose();
    }
  }, 180_000);
});
