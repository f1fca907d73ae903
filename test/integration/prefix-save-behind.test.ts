/**
 * The prefix cache's save behind a generation, on the real engine (one slot, the disk tier in a folder of
 * the test's, so its files can be read): once most grants evict, a conversation's state is saved as soon
 * as its generation ends, before any request takes the slot; the request that evicts it then reports that
 * save and saves nothing itself, and the evicted conversation comes back restored. A conversation that
 * goes on on its slot drops the copy, unreported. Without pressure nothing is saved behind.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { promptTokens, startEngine, waitFor } from '../helpers/engines.js';

const greedy = { temperature: 0, seed: 3 };

async function oneSlotEngine() {
  const diskDir = mkdtempSync(join(tmpdir(), 'manifold-save-behind-'));
  // Every state is larger than one byte of RAM: each entry goes to the disk tier, a folder the test can list.
  const engine = await startEngine({ slots: 1, prefixCache: { ramBytes: 1, diskDir } });
  const entries = (): string[] => readdirSync(diskDir).flatMap((engineDir) => readdirSync(join(diskDir, engineDir)).filter((f) => f.endsWith('.state')));
  const run = async (tokens: number[], conversationId: string) => {
    const handle = engine.generate({ tokens, conversationId, maxTokens: 8, sampling: greedy, ignoreEos: true });
    return { started: await handle.started, done: await handle.done };
  };
  return { entries, run };
}

describe('saving a slot behind its generation under slot pressure', () => {
  it('saves the ended conversation while its slot is idle; the request that evicts it reports that save and saves nothing itself', async () => {
    const { entries, run } = await oneSlotEngine();
    // Five conversations in turn on one slot: four of the five grants evict the one before.
    for (const conversation of [1, 2, 3, 4]) await run(promptTokens(200, conversation), `c${conversation}`);
    expect(entries()).toHaveLength(3);
    const e1Prompt = promptTokens(200, 5);
    const e1 = await run(e1Prompt, 'e');
    // E's state is saved with no request after it: the slot is idle.
    await waitFor(() => (entries().length === 5 ? true : undefined), "E's state saved behind its generation");

    const f = await run(promptTokens(200, 6), 'f');
    const saves = f.started.prefixCache?.moves.filter((m) => m.fromSlot !== undefined) ?? [];
    // One save reported, E's, made before F came: F saved nothing itself.
    expect(saves).toEqual([{ entry: 4, tier: 'disk', fromSlot: 0, tokens: e1.done.heldTokens, bytes: expect.any(Number) }]);

    const e2 = await run([...e1Prompt, ...e1.done.completionTokens, ...promptTokens(20, 9)], 'e');
    expect(e2.started.prefixCache?.restored).toMatchObject({ entry: 4, tier: 'disk' });
    expect(e2.done.reusedTokens).toBeGreaterThanOrEqual(e1Prompt.length);
  });

  it('drops the copy, unreported, when the conversation goes on on its slot; saves nothing behind without pressure', async () => {
    const { entries, run } = await oneSlotEngine();
    const a1Prompt = promptTokens(200, 1);
    const a1 = await run(a1Prompt, 'a');
    const a2 = await run([...a1Prompt, ...a1.done.completionTokens, ...promptTokens(20, 9)], 'a');
    // One grant, no eviction: no pressure, nothing saved behind A's turns.
    expect(a2.started.prefixCache).toBeUndefined();
    expect(entries()).toEqual([]);

    for (const conversation of [2, 3, 4, 5]) await run(promptTokens(200, conversation), `c${conversation}`);
    await waitFor(() => (entries().length === 5 ? true : undefined), "conversation 5's state saved behind its generation");
    const c5 = promptTokens(200, 5);
    const last = await run([...c5, ...promptTokens(28, 7)], 'c5');
    // The slot kept conversation 5: its copy is dropped, and core never hears of it.
    expect(last.started.prefixCache?.moves ?? []).toEqual([]);
    expect(last.done.reusedTokens).toBeGreaterThanOrEqual(c5.length);
    // Entries 0–3 are the evictions of a and conversations 2–4; 4 was conversation 5's copy (and a save
    // behind this last turn may be under way, as the pressure is still high).
    expect(entries()).not.toContain('entry-4.state');
    expect(entries()).toEqual(expect.arrayContaining(['entry-0.state', 'entry-1.state', 'entry-2.state', 'entry-3.state']));
  });
});
