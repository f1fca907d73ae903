/** Core's tokenizer on the generated model: tokens round-trip and the model's ChatML template is applied. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tokenizer, TokenizerError } from '../../electron/core/tokenizer.js';
import { startEngine, testModelPath } from '../helpers/engines.js';

let tokenizer: Tokenizer;
beforeAll(async () => {
  tokenizer = await Tokenizer.open(testModelPath());
});
afterAll(async () => {
  await tokenizer.dispose();
});

describe('tokenizer', () => {
  it('round-trips text, including characters outside the vocabulary through byte fallback', () => {
    const text = 'hello the world, naïve café ✓';
    const tokens = tokenizer.tokenize(text);
    expect(tokens.length).toBeGreaterThan(5);
    expect(tokenizer.detokenize(tokens).trim()).toBe(text);
    // Merged pieces make common words shorter than their letters.
    expect(tokenizer.tokenize(' the model').length).toBeLessThan(' the model'.length);
  });

  it("applies the model's chat template with control tokens and the generation prompt", () => {
    expect(tokenizer.hasModelTemplate).toBe(true);
    const { text, tokens } = tokenizer.applyChatTemplate([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
    ]);
    expect(text).toBe('<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n');
    const imStart = tokenizer.tokenize('<|im_start|>', { special: true });
    expect(imStart).toHaveLength(1);
    expect(tokens.filter((t) => t === imStart[0])).toHaveLength(3);
    // Without special parsing the same text is ordinary characters.
    expect(tokenizer.tokenize('<|im_start|>').length).toBeGreaterThan(1);
  });

  it('feeds an engine: a templated prompt generates', async () => {
    const engine = await startEngine({ slots: 1, contextSize: 256 });
    const { tokens } = tokenizer.applyChatTemplate([{ role: 'user', content: 'write code' }]);
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
      expect((error as Error).message).toContain('not a GGUF file');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
