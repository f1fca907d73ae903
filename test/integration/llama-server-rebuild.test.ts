/**
 * Live resize of a replica of engine kind `llama-server` (a real llama-server child of the test model):
 * a context change restarts the child and restores each slot from its state file, a slot-count change
 * evaluates the saved prefixes again, the next turns reuse them (llama-server's cache_n), a request
 * that arrives during the resize waits and is served after it, a size llama-server cannot start with
 * rolls back to the old child's sizes with the prefixes, and the pre-check refuses what cannot be.
 */
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { ReplicaSet } from '../../core/replicas/replica-set.js';
import { promptTokens } from '../helpers/engines.js';
import { rebuild, rebuildInMaintenance, startReplicaSet, llamaServerOf } from '../helpers/replica-sets.js';

/** One turn of each conversation after `histories` (or a first turn of 200 tokens); returns the new histories and the tokens each reused. */
async function turns(set: ReplicaSet, histories: number[][] | number): Promise<{ histories: number[][]; reused: number[] }> {
  const prompts =
    typeof histories === 'number' ? Array.from({ length: histories }, (_, c) => promptTokens(200, c * 31 + 1)) : histories.map((h) => [...h, 350, 351]);
  const next: number[][] = [];
  const reused: number[] = [];
  // One after another, so each conversation takes its own slot (llama-server picks the slot sharing the most of the prompt).
  for (const [c, prompt] of prompts.entries()) {
    const done = await set.generate({ tokens: prompt, conversationId: `c${c}`, maxTokens: 8, sampling: { temperature: 0 }, ignoreEos: true });
    next.push([...prompt, ...done.completionTokens]);
    reused.push(done.reusedTokens);
  }
  return { histories: next, reused };
}

/** Every conversation's turn reused its whole history but the last token (which llama-server never evaluated). */
function expectPrefixesKept(before: number[][], reused: number[]): void {
  for (const [c, history] of before.entries()) expect(reused[c], `conversation ${c}`).toBeGreaterThanOrEqual(history.length - 1);
}

describe('live resize of a llama-server replica', () => {
  it('changes the context, then the slot count, by restarting the child; keeps both prefixes; a request during the resize waits', async () => {
    const { set, logs } = await startReplicaSet({ replicas: 1, engine: { kind: 'llama-server', contextSize: 1024, slots: 2, threads: 1 } });
    const oldPid = llamaServerOf(set, 0).pid;
    const first = await turns(set, 2);

    const { outcomes: resizing } = await rebuildInMaintenance(set, { replica: 0, change: { contextSize: 2048 } });
    let resized = false;
    const during = set.generate({ tokens: promptTokens(40, 7), maxTokens: 3, ignoreEos: true }).then((done) => ({ done, afterResize: resized }));
    const [applied] = await resizing;
    resized = true;
    expect(applied).toMatchObject({ replica: 0, outcome: 'Applied', engine_preserved: true, pools: ['kv'], sizes: { contextSize: 2048, slots: 2 } });
    if (applied?.outcome !== 'Applied') return;
    expect(applied.prefixes).toMatchObject({ kept: 2, dropped: 0 });
    expect(applied.prefixes.slots.every((s) => s.restoredBy === 'state_file' && s.to === s.from)).toBe(true);
    const waited = await during;
    expect(waited.done.completionTokens).toHaveLength(3);
    expect(waited.afterResize).toBe(true);
    expect(llamaServerOf(set, 0).pid).not.toBe(oldPid);
    expect(set.readyInfo(0)!.sizes).toMatchObject({ contextSize: 2048, slots: 2 });
    expect(set.replicaView()[0]!.state).toBe('ready');
    // The saved slot files are removed once the prefixes are back.
    expect(await readdir(llamaServerOf(set, 0).slotFolder!)).toEqual([]);
    const second = await turns(set, first.histories);
    expectPrefixesKept(first.histories, second.reused);

    const [slotsChanged] = await rebuild(set, { replica: 0, change: { slots: 3 } });
    expect(slotsChanged).toMatchObject({ outcome: 'Applied', sizes: { contextSize: 2048, slots: 3 } });
    if (slotsChanged?.outcome !== 'Applied') return;
    // Another slot count: llama.cpp refuses the state files, so the prefixes are evaluated again from their tokens.
    expect(slotsChanged.prefixes.kept).toBe(2);
    expect(slotsChanged.prefixes.slots.every((s) => s.restoredBy === 're_evaluation')).toBe(true);
    expect(set.replicaView()[0]!.slots).toBe(3);
    const third = await turns(set, second.histories);
    expectPrefixesKept(second.histories, third.reused);
    // A later start (a heal) loads the new sizes.
    expect(llamaServerOf(set, 0).loadOptions).toMatchObject({ contextSize: 2048, slots: 3 });
    expect(logs.some((l) => /\[replica 0 \d+\] ready: 3 slots × 2048 tokens on llama-server/.test(l))).toBe(true);
  }, 300_000);

  it('rolls back to the old sizes with the prefixes when the new child cannot start, and the pre-check refuses what cannot fit', async () => {
    const { set } = await startReplicaSet({ replicas: 1, engine: { kind: 'llama-server', contextSize: 1024, slots: 2, threads: 1, flashAttention: false } });
    const first = await turns(set, 2);

    // A quantized V cache needs flash attention, which this replica has off: llama-server exits at load.
    const [rolledBack] = await rebuild(set, { replica: 0, change: { kvType: 'q4_0' } });
    expect(rolledBack).toMatchObject({
      outcome: 'RolledBack',
      engine_preserved: true,
      restored: { pools: ['kv'], sizes: { kvType: 'f16', contextSize: 1024, slots: 2 } },
    });
    if (rolledBack?.outcome !== 'RolledBack') return;
    expect(rolledBack.reason).toContain('llama-server exited before it was ready');
    expect(rolledBack.prefixes).toMatchObject({ kept: 2, dropped: 0 });
    expect(set.replicaView()[0]!.state).toBe('ready');
    expect(llamaServerOf(set, 0).loadOptions).toMatchObject({ kvType: 'f16', contextSize: 1024 });
    const second = await turns(set, first.histories);
    expectPrefixesKept(first.histories, second.reused);

    const pid = llamaServerOf(set, 0).pid;
    const [refused] = await rebuild(set, { replica: 0, change: { contextSize: 1 << 22, slots: 8 } });
    expect(refused).toMatchObject({ outcome: 'RejectedIntact', stage: 'precheck', reason: expect.stringContaining('contextSize × slots = 33554432') });
    // What fits is estimated from the model's attention shape: the KV cache's bytes against free RAM.
    const [verdict] = await set.precheck({ replica: 0, change: { contextSize: 2048 } });
    expect(verdict).toMatchObject({ fits: true, pools: ['kv'], reason: expect.stringMatching(/^the KV cache at the new sizes \([\d.]+ [KMG]?i?B\) fits/) });
    if (!('needed' in verdict!)) return;
    expect(verdict.needed.ram).toBeGreaterThan(0);
    expect(llamaServerOf(set, 0).pid).toBe(pid);
    expect(set.replicaView()[0]!.state).toBe('ready');
  }, 300_000);
});
