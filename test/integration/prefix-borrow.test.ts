/**
 * Borrowing on real engines: a conversation saved in replica A's prefix cache is restored by replica B
 * (B's prefill skips it, the greedy text is the one A gets restoring its own entry, and A keeps its entry);
 * a hint naming folders that are not engines' folders beside the borrower's is ignored; an entry that
 * vanished before B could link it is prefilled without an error; and through the front, a
 * turn whose replica is busy goes to the free replica, which borrows its history instead of waiting,
 * also when it came while that replica was still saving it (it is re-planned once the save is reported).
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { GenerateRequestInput } from '../../common/engine-protocol.js';
import type { EngineClient } from '../../core/engine/engine-client.js';
import { LONG_ANSWER_PROMPT, promptTokens, spawnEngine, testModelPath } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';

const greedy = { temperature: 0, seed: 3 };

async function startOneSlotEngine() {
  const { client, logs } = spawnEngine();
  const info = await client.load({ modelPath: testModelPath(), contextSize: 1024, slots: 1, threads: 1 });
  return { client, logs, dirs: info.prefixCacheShare!.dirs };
}

async function run(engine: EngineClient, tokens: number[], conversationId: string, maxTokens: number, borrow?: GenerateRequestInput['borrow']) {
  const handle = engine.generate({ tokens, conversationId, maxTokens, sampling: greedy, ignoreEos: true, ...(borrow ? { borrow } : {}) });
  return { started: await handle.started, done: await handle.done };
}

type ServedChat = Awaited<ReturnType<typeof startServed>>;

/**
 * Through the front of `served` (2 replicas × 1 slot): conversation A's first turn, another conversation's
 * (`otherRepeats` sentences), then a long answer that takes A's replica (the tie goes to the lower index,
 * which served A), evicting A's conversation into its prefix cache, and A's next turn while that answer
 * keeps the replica's only slot busy, sent at its role chunk (`dispatch`) or its first token.
 */
async function turnWhileItsReplicaIsBusy(served: ServedChat, { otherRepeats, sendAt }: { otherRepeats: number; sendAt: 'dispatch' | 'first token' }) {
  const client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const model = served.workstation.modelId;
  type Served = { replica: number; timings: { cache_n: number; prompt_n: number } };
  const chat = async (messages: OpenAI.Chat.ChatCompletionMessageParam[]) => {
    const answer = await client.chat.completions.create({ model, messages, max_tokens: 12, temperature: 0, seed: 1 });
    return { answer, served: (answer as unknown as { manifold: Served }).manifold };
  };
  const a: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Tell me about the sea and the ships on it. '.repeat(10) }];
  const a1 = await chat(a);
  const other = await chat([{ role: 'user', content: 'Write a list of mountains, rivers and lakes. '.repeat(otherRepeats) }]);
  const abort = new AbortController();
  const long = await client.chat.completions.create(
    { model, messages: [{ role: 'user', content: LONG_ANSWER_PROMPT }], max_tokens: 3000, temperature: 0, stream: true },
    { signal: abort.signal },
  );
  const chunks = long[Symbol.asyncIterator]();
  let next = await chunks.next();
  if (sendAt === 'first token') while (!next.done && !next.value.choices[0]?.delta.content) next = await chunks.next();
  a.push({ role: 'assistant', content: a1.answer.choices[0]!.message.content ?? '' }, { role: 'user', content: 'And the harbours?' });
  const a2 = await chat(a);
  abort.abort();
  await chunks.return?.();
  return { a1, other, a2 };
}

describe('borrowing a prefix another replica saved', () => {
  it("restores replica A's saved conversation on replica B, and prefills when the entry vanished before the link", async () => {
    const a = await startOneSlotEngine();
    const b = await startOneSlotEngine();
    expect(a.dirs.ram).not.toBe(b.dirs.ram);
    const a1Prompt = promptTokens(300, 1);
    const a1 = await run(a.client, a1Prompt, 'A', 16);
    const x1Prompt = promptTokens(300, 2);
    const x1 = await run(a.client, x1Prompt, 'X', 16);
    // X evicted A's conversation on engine A: saved as its entry 0.
    expect(x1.started.prefixCache?.moves).toEqual([{ entry: 0, tier: 'ram', fromSlot: 0, tokens: expect.any(Number), bytes: expect.any(Number) }]);

    const a2Prompt = [...a1Prompt, ...a1.done.completionTokens, ...promptTokens(20, 5)];
    const borrowed = await run(b.client, a2Prompt, 'A', 24, { entry: 0, tier: 'ram', dirs: a.dirs });
    expect(borrowed.started.prefixCache?.restored).toMatchObject({ entry: 0, tier: 'ram', borrowed: true });
    expect(borrowed.done.reusedTokens).toBeGreaterThanOrEqual(a1Prompt.length);
    expect(borrowed.done.timings.prefillTokens).toBe(a2Prompt.length - borrowed.done.reusedTokens);

    // Engine A still has its entry (B linked the file) and restores it: the same greedy text.
    const own = await run(a.client, a2Prompt, 'A', 24);
    expect(own.started.prefixCache?.restored).toMatchObject({ entry: 0, tier: 'ram' });
    expect(own.started.prefixCache?.restored?.borrowed).toBeUndefined();
    expect(borrowed.done.completionTokens).toHaveLength(24);
    expect(borrowed.done.completionTokens).toEqual(own.done.completionTokens);

    // A saved X as entry 1 when A's turn came back. The owner drops it (its state goes first, as its
    // discard does) between core's decision and B's link: B prefills X's next turn, with no error.
    expect(own.started.prefixCache?.moves).toContainEqual(expect.objectContaining({ entry: 1, tier: 'ram', fromSlot: 0 }));
    const x2Prompt = [...x1Prompt, ...x1.done.completionTokens, ...promptTokens(20, 6)];
    // A hint naming folders that are not engines' folders beside the borrower's own is ignored (a hint
    // cannot make an engine read other files), even when they lead to a real entry (here, links to A's).
    const elsewhere = mkdtempSync(join(tmpdir(), 'manifold-not-a-sibling-'));
    const links = { ram: join(elsewhere, 'engine-1'), disk: join(elsewhere, 'engine-2') };
    symlinkSync(a.dirs.ram, links.ram);
    symlinkSync(a.dirs.disk, links.disk);
    const c = await startOneSlotEngine();
    const refused = await run(c.client, x2Prompt, 'X', 4, { entry: 1, tier: 'ram', dirs: links });
    expect(refused.started.prefixCache?.restored).toBeUndefined();
    expect(refused.done.reusedTokens).toBe(0);

    rmSync(join(a.dirs.ram, 'entry-1.state'));
    const vanished = await run(b.client, x2Prompt, 'X', 8, { entry: 1, tier: 'ram', dirs: a.dirs });
    expect(vanished.started.prefixCache?.restored).toBeUndefined();
    expect(vanished.done.reusedTokens).toBe(0);
    expect(vanished.done.timings.prefillTokens).toBe(x2Prompt.length);
    expect(vanished.done.completionTokens).toHaveLength(8);
    expect(b.logs.some((line) => line.includes('borrowed entry 1') && line.includes('is gone'))).toBe(true);
  });

  it('serves a turn on the free replica, borrowing its history, while the replica that saved it is busy', async () => {
    const served = await startServed({ replicas: 2, engine: { contextSize: 2048, slots: 1, threads: 1 } });
    // Replica A's prompt is under 256 tokens, so it measures no prefill rate: costs stay baseline, and ties break by routed count and index.
    // A's next turn goes at the long answer's first token, not its role chunk (sent when it was dispatched):
    // the engine reported saving A's conversation (its `started`) before it.
    const { a1, other, a2 } = await turnWhileItsReplicaIsBusy(served, { otherRepeats: 10, sendAt: 'first token' });
    expect(other.served.replica).not.toBe(a1.served.replica);
    expect(a2.served.replica).toBe(other.served.replica);
    expect(a2.served.replica).not.toBe(a1.served.replica);
    expect(a2.answer.usage!.prompt_tokens_details!.cached_tokens!, served.logs.join('\n')).toBeGreaterThanOrEqual(a1.answer.usage!.prompt_tokens);
    expect(a2.served.timings.prompt_n).toBe(a2.answer.usage!.prompt_tokens - a2.served.timings.cache_n);
    await served.close();
  });

  it('re-plans a turn held for its busy replica once that replica reports saving it, and borrows it on the free one', async () => {
    // Each save of an evicted conversation waits 1.5 s first, so A's next turn, sent at the long answer's role
    // chunk, arrives after the long answer took A's replica but before its engine reported saving A: the index
    // still shows A in that busy slot, and the turn is held for it (a hold longer than the test). Only the
    // report of the save can free it.
    const served = await startServed(
      { replicas: 2, engine: { contextSize: 2048, slots: 1, threads: 1 }, queue: { cacheHoldMs: 600_000 } },
      { replicaOptions: { testOnlyEngineFaults: { delayPrefixSaveMs: 1500 } } },
    );
    // Both prompts under 256 tokens: no replica measures a prefill rate, so the hold lasts `cacheHoldMs` (with
    // rates it would last as long as prefilling A's history takes, milliseconds on the test model).
    const { a1, other, a2 } = await turnWhileItsReplicaIsBusy(served, { otherRepeats: 7, sendAt: 'dispatch' });
    expect(other.served.replica).not.toBe(a1.served.replica);
    // Held until the long answer ended, it would have gone back to A's replica, free again.
    expect(a2.served.replica, served.logs.join('\n')).toBe(other.served.replica);
    expect(a2.answer.usage!.prompt_tokens_details!.cached_tokens!, served.logs.join('\n')).toBeGreaterThanOrEqual(a1.answer.usage!.prompt_tokens);
    await served.close();
  });
});
