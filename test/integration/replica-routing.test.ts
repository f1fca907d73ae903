/** Prefix-aware routing over real engine replicas: conversations return to their replica; load spreads. */
import { describe, expect, it } from 'vitest';
import type { ReplicaGenerateResult } from '../../core/replicas/request-dispatcher.js';
import { promptTokens } from '../helpers/engines.js';
import { startReplicaSet } from '../helpers/replica-sets.js';
import type { RoutingPolicy } from '../../core/config/run-config.js';

/** 4 conversations × 3 turns, turn by turn, the order rotating each turn (users do not take turns in a fixed order). */
async function runConversations(policy: RoutingPolicy): Promise<{ results: ReplicaGenerateResult[][]; prompts: number[][][] }> {
  const { set } = await startReplicaSet({ replicas: 2, routing: policy });
  const histories = [0, 1, 2, 3].map((c) => promptTokens(150, c * 37 + 1));
  const results: ReplicaGenerateResult[][] = [[], [], [], []];
  const prompts: number[][][] = [[], [], [], []];
  for (let turn = 0; turn < 3; turn++) {
    for (let k = 0; k < 4; k++) {
      const c = (k + turn) % 4;
      const prompt = [...histories[c]!];
      prompts[c]!.push(prompt);
      const result = await set.generate({ tokens: prompt, conversationId: `c${c}`, maxTokens: 12, sampling: { temperature: 0 }, ignoreEos: true });
      results[c]!.push(result);
      histories[c] = [...prompt, ...result.completionTokens, ...promptTokens(40, turn * 11 + c)];
    }
  }
  const view = set.replicaView();
  expect(view.reduce((s, r) => s + r.routed, 0)).toBe(12);
  await set.close();
  return { results, prompts };
}

describe('replica routing', () => {
  it('sends every later turn to its conversation’s replica under prefix, and reuses measurably less under round-robin', async () => {
    const prefix = await runConversations('prefix');
    for (let c = 0; c < 4; c++) {
      const [first, ...later] = prefix.results[c]!;
      for (const [t, result] of later.entries()) {
        expect(result.replica).toBe(first!.replica);
        const trace = prefix.results
          .map((turns, i) => `c${i}: ${turns.map((r) => `r${r.replica}s${r.slot} reused ${r.reusedTokens}/${r.usage.promptTokens}`).join(', ')}`)
          .join('; ');
        expect(result.reusedTokens, trace).toBeGreaterThanOrEqual(prefix.prompts[c]![t]!.length);
      }
    }
    // New conversations were spread, two per replica.
    expect(prefix.results.filter((r) => r[0]!.replica === 0)).toHaveLength(2);

    const roundRobin = await runConversations('round-robin');
    const reused = (runs: ReplicaGenerateResult[][]) => runs.flat().reduce((s, r) => s + r.reusedTokens, 0);
    expect(reused(roundRobin.results)).toBeLessThan(reused(prefix.results) / 2);
  });

  it('gives a new conversation to the idle replica while the other is busy', async () => {
    const { set } = await startReplicaSet({ replicas: 2 });
    const conversation = promptTokens(200, 3);
    const first = await set.generate({ tokens: conversation, maxTokens: 4, ignoreEos: true });
    const busyReplica = first.replica;
    // Two long continuations of the conversation: the first goes to its replica; the second, with that
    // replica busy, is cheaper to read again on the idle one.
    const long = [0, 1].map((i) =>
      set.generate({ tokens: [...conversation, ...first.completionTokens, 400 + i], maxTokens: 300, sampling: { temperature: 0 }, ignoreEos: true }),
    );
    const fresh = await set.generate({ tokens: promptTokens(100, 77), maxTokens: 4, ignoreEos: true });
    const [a, b] = await Promise.all(long);
    expect(a!.replica).toBe(busyReplica);
    expect(b!.replica).not.toBe(busyReplica);
    expect(fresh.replica).not.toBe(busyReplica);
    expect(
      set
        .replicaView()
        .map((r) => r.routed)
        .sort(),
    ).toEqual([2, 2]);
  });

  it('reports the aggregates and the global slot view over replicas', async () => {
    const { set } = await startReplicaSet({ replicas: 2, engine: { contextSize: 512, slots: 2, threads: 1 } });
    expect(set.totalSlots).toBe(4);
    expect(set.maxContext).toBe(512);
    expect(set.alive).toBe(true);
    expect(set.info()).toMatchObject({ replicas: 2, replicas_alive: 2, model: { architecture: 'llama' } });
    const result = await set.generate({ tokens: promptTokens(80), conversationId: 'agg', maxTokens: 3, ignoreEos: true });
    const slots = await set.slotsView();
    expect(slots.map((s) => [s.replica, s.slot])).toEqual([
      [0, 0],
      [0, 1],
      [1, 2],
      [1, 3],
    ]);
    const used = slots.find((s) => s.slot === result.globalSlot)!;
    expect(used).toMatchObject({ replica: result.replica, conversationId: 'agg' });
    expect(set.replicaView().map((r) => r.state)).toEqual(['ready', 'ready']);
    expect(set.waiting).toBe(0);
  });
});
