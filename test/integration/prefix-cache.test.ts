/**
 * The tiered prefix cache on the real engine: one slot, conversation A, then B (which evicts A), then A's
 * next turn — restored from the RAM tier, or from the disk tier when RAM's budget is too small, with the
 * same greedy text as without the cache; and through the OpenAI front, A's prompt reported as cached.
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { PrefixCacheOptions } from '../../common/prefix-cache.js';
import { promptTokens, startEngine } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';

const greedy = { temperature: 0, seed: 3 };

/** A, B, then A's second turn on one slot; each request's result and `started`. */
async function threeTurns(prefixCache: Partial<PrefixCacheOptions>) {
  const engine = await startEngine({ slots: 1, prefixCache });
  const run = async (tokens: number[], conversationId: string, maxTokens: number) => {
    const handle = engine.generate({ tokens, conversationId, maxTokens, sampling: greedy, ignoreEos: true });
    return { started: await handle.started, done: await handle.done };
  };
  const a1Prompt = promptTokens(300, 1);
  const a1 = await run(a1Prompt, 'A', 16);
  const b = await run(promptTokens(300, 2), 'B', 16);
  const a2Prompt = [...a1Prompt, ...a1.done.completionTokens, ...promptTokens(20, 5)];
  const a2 = await run(a2Prompt, 'A', 24);
  return { a1, b, a2, a1Prompt, a2Prompt };
}

describe('tiered prefix cache', () => {
  it('restores an evicted conversation from RAM instead of prefilling it, with the same greedy text as a prefill', async () => {
    const on = await threeTurns({});
    expect(on.b.started.prefixCache?.moves).toEqual([{ entry: 0, tier: 'ram', fromSlot: 0, tokens: expect.any(Number), bytes: expect.any(Number) }]);
    expect(on.a2.started.prefixCache?.restored).toMatchObject({ entry: 0, tier: 'ram' });
    expect(on.a2.done.reusedTokens).toBeGreaterThanOrEqual(on.a1Prompt.length);
    expect(on.a2.done.timings.prefillTokens).toBe(on.a2Prompt.length - on.a2.done.reusedTokens);

    const off = await threeTurns({ ramBytes: 0, diskBytes: 0 });
    expect(off.b.started.prefixCache).toBeUndefined();
    expect(off.a2.started.prefixCache).toBeUndefined();
    expect(off.a2.done.reusedTokens).toBe(0);
    expect(on.a2.done.completionTokens).toHaveLength(24);
    expect(on.a2.done.completionTokens).toEqual(off.a2.done.completionTokens);
  });

  it('saves to the disk tier when the RAM budget is too small, and restores from there', async () => {
    const diskDir = mkdtempSync(join(tmpdir(), 'manifold-prefix-disk-'));
    const disk = await threeTurns({ ramBytes: 1, diskDir });
    expect(disk.b.started.prefixCache?.moves).toEqual([{ entry: 0, tier: 'disk', fromSlot: 0, tokens: expect.any(Number), bytes: expect.any(Number) }]);
    expect(disk.a2.started.prefixCache?.restored).toMatchObject({ entry: 0, tier: 'disk' });
    expect(disk.a2.done.reusedTokens).toBeGreaterThanOrEqual(disk.a1Prompt.length);
    // B was saved when A came back: its state and its sidecar (tokens and layout) are files of the engine's folder under diskDir.
    const [engineDir, ...others] = readdirSync(diskDir);
    expect(others).toEqual([]);
    expect(readdirSync(join(diskDir, engineDir!)).sort()).toEqual(['entry-1.json', 'entry-1.state']);
  });

  it("reports A's next turn as cached tokens through the front with the cache on, and not with it off", async () => {
    const cachedOnThirdTurn = async (prefixCache: { ramBytes?: number; diskBytes?: number }) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'manifold-data-'));
      const served = await startServed({ replicas: 1, engine: { contextSize: 1024, slots: 1, threads: 1, prefixCache } }, { dataDir });
      const client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const model = served.workstation.modelId;
      const chat = (messages: OpenAI.Chat.ChatCompletionMessageParam[]) =>
        client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0, seed: 1 });
      const a: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Tell me about the sea and the ships on it. '.repeat(12) }];
      const a1 = await chat(a);
      await chat([{ role: 'user', content: 'Write a list of mountains, rivers and lakes. '.repeat(12) }]);
      a.push({ role: 'assistant', content: a1.choices[0]!.message.content ?? '' }, { role: 'user', content: 'And the harbours?' });
      const a2 = await chat(a);
      const cacheDir = join(dataDir, 'prefix-cache');
      const files = existsSync(cacheDir) ? readdirSync(cacheDir, { recursive: true, encoding: 'utf8' }) : [];
      await served.close();
      return { firstPrompt: a1.usage!.prompt_tokens, cached: a2.usage!.prompt_tokens_details!.cached_tokens!, text: a2.choices[0]!.message.content, files };
    };
    const on = await cachedOnThirdTurn({ ramBytes: 1 });
    const off = await cachedOnThirdTurn({ ramBytes: 0, diskBytes: 0 });
    expect(on.cached).toBeGreaterThanOrEqual(on.firstPrompt);
    // Without the cache only the chat template's first tokens, shared with B, are kept.
    expect(off.cached).toBeLessThan(8);
    expect(on.text).toBe(off.text);
    // With RAM too small the states went to the disk tier under the data dir (B's is there now).
    expect(on.files.some((f) => /engine-\d+[/\\]entry-\d+\.state$/.test(f))).toBe(true);
  });
});
