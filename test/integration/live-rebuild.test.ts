/**
 * Live resize on real engines (DESIGN §5): kv rebuilds keep the model and the slots' prefixes, the
 * pre-check refuses what does not fit, the failure outcomes come from test-only fault injection and from
 * a real failed allocation, a rolling rebuild of 2 replicas under load fails no request, a single
 * replica's requests wait out its rebuild, and a latched replica recovers by a process restart.
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { NoReplicaError } from '../../core/replicas/replica-errors.js';
import type { ReplicaSet } from '../../core/replicas/replica-set.js';
import { promptTokens, waitFor } from '../helpers/engines.js';
import { rebuild, rebuildInMaintenance, startReplicaSet, waitForState } from '../helpers/replica-sets.js';

/** Runs a first turn of `count` conversations; returns each one's full history (prompt + answer). */
async function firstTurns(set: ReplicaSet, count: number, length = 200): Promise<number[][]> {
  const histories: number[][] = [];
  for (let c = 0; c < count; c++) {
    const prompt = promptTokens(length, c * 31 + 1);
    const done = await set.generate({ tokens: prompt, conversationId: `c${c}`, maxTokens: 8, sampling: { temperature: 0 }, ignoreEos: true });
    histories.push([...prompt, ...done.completionTokens]);
  }
  return histories;
}

async function nextTurnReuse(set: ReplicaSet, histories: number[][]): Promise<number[]> {
  const reused: number[] = [];
  for (const [c, history] of histories.entries()) {
    const done = await set.generate({ tokens: [...history, 350, 351], conversationId: `c${c}`, maxTokens: 4, ignoreEos: true });
    reused.push(done.reusedTokens);
  }
  return reused;
}

describe('live resize of a replica', () => {
  it('a kv rebuild changes context and keeps the model and the slots prefixes (state files)', async () => {
    const { set } = await startReplicaSet({ replicas: 1 });
    const loadsBefore = set.readyInfo(0)!.modelLoads;
    const histories = await firstTurns(set, 2);
    const [outcome] = await rebuild(set, { replica: 0, change: { contextSize: 2048 } });
    expect(outcome).toMatchObject({ replica: 0, outcome: 'Applied', engine_preserved: true, pools: ['kv'] });
    if (outcome?.outcome !== 'Applied') return;
    expect(outcome.sizes.contextSize).toBeGreaterThanOrEqual(2048);
    expect(set.readyInfo(0)!.sizes.contextSize).toBe(outcome.sizes.contextSize);
    expect(set.readyInfo(0)!.modelLoads).toBe(loadsBefore);
    expect(outcome.prefixes.kept / (outcome.prefixes.kept + outcome.prefixes.dropped)).toBeGreaterThanOrEqual(0.95);
    expect(outcome.prefixes.slots.every((s) => s.restoredBy === 'state_file')).toBe(true);
    const reused = await nextTurnReuse(set, histories);
    for (const [c, history] of histories.entries()) expect(reused[c]).toBeGreaterThanOrEqual(history.length - 1);
    expect(set.replicaView()[0]!.state).toBe('ready');
  });

  it('a slot-count change re-evaluates the kept prefixes after Applied, its progress on the replica view', async () => {
    // Prefixes long enough that evaluating them again takes a while (seconds on 2 CPU cores).
    const { set } = await startReplicaSet({ replicas: 1, engine: { contextSize: 3072, slots: 2, threads: 1 } });
    const histories = await firstTurns(set, 2, 2500);
    const [outcome] = await rebuild(set, { replica: 0, change: { slots: 3 } });
    expect(outcome?.outcome).toBe('Applied');
    if (outcome?.outcome !== 'Applied') return;
    expect(outcome.sizes.slots).toBe(3);
    expect(outcome.prefixes.kept).toBe(2);
    expect(outcome.prefixes.slots.every((s) => s.restoredBy === 're_evaluation')).toBe(true);
    // Re-evaluation runs after Applied without holding requests; the replica view reports it until it is done.
    const seen: { done: number; total: number }[] = [];
    const running = await waitFor(() => set.replicaView()[0]!.reEvaluation ?? undefined, 'the re-evaluation progress');
    expect(running.total).toBe(2);
    expect(running.done).toBeLessThan(running.total);
    await waitFor(
      () => {
        const progress = set.replicaView()[0]!.reEvaluation;
        if (progress) seen.push(progress);
        return progress === null ? true : undefined;
      },
      'the re-evaluation to end',
      30_000,
    );
    expect(seen.every((p, i) => p.total === 2 && p.done >= (seen[i - 1]?.done ?? running.done))).toBe(true);
    expect((await set.slotsView()).every((s) => s.state === 'idle')).toBe(true);
    const reused = await nextTurnReuse(set, histories);
    for (const [c, history] of histories.entries()) expect(reused[c]).toBeGreaterThanOrEqual(history.length - 1);
    expect(set.replicaView()[0]!.slots).toBe(3);
  });

  it('a weights rebuild reloads the model (and the context) and still keeps the prefixes', async () => {
    const { set } = await startReplicaSet({ replicas: 1 });
    const loadsBefore = set.readyInfo(0)!.modelLoads;
    const histories = await firstTurns(set, 1);
    const [outcome] = await rebuild(set, { replica: 0, change: { gpuLayers: 0 } });
    expect(outcome).toMatchObject({ outcome: 'Applied', pools: ['kv', 'weights'], sizes: { gpuLayers: 0 } });
    expect(set.readyInfo(0)!.modelLoads).toBe(loadsBefore + 1);
    const [reused] = await nextTurnReuse(set, histories);
    expect(reused).toBeGreaterThanOrEqual(histories[0]!.length - 1);
  });

  it('the pre-check refuses a size that does not fit, naming the shortfall, with the engine untouched', async (context) => {
    const { set } = await startReplicaSet({ replicas: 1 });
    const absurd = { contextSize: 1 << 22, slots: 4, kvType: 'f32' } as const;
    const [verdict] = await set.precheck({ replica: 0, change: absurd });
    if (verdict?.fits) {
      console.log(`skipped: this machine has ${os.freemem()} bytes free, enough for ${JSON.stringify(absurd)} on the test model`);
      context.skip();
    }
    expect(verdict).toMatchObject({ replica: 0, fits: false });
    expect(verdict!.reason).toMatch(/short by .* \(\d+ bytes\)/);
    const before = set.readyInfo(0)!;
    const [outcome] = await rebuild(set, { replica: 0, change: absurd });
    expect(outcome).toMatchObject({ outcome: 'RejectedIntact', stage: 'precheck', engine_preserved: true });
    expect(set.readyInfo(0)).toBe(before);
    const done = await set.generate({ tokens: promptTokens(50), maxTokens: 3, ignoreEos: true });
    expect(done.completionTokens).toHaveLength(3);

    // The same size with the pre-check skipped: node-llama-cpp's allocation itself fails, after the teardown.
    const [forced] = await rebuild(set, { replica: 0, change: absurd, skipPrecheck: true });
    expect(['RejectedIntact', 'RolledBack']).toContain(forced?.outcome);
    expect(forced?.outcome !== 'Skipped' && forced?.engine_preserved).toBe(true);
    expect(set.readyInfo(0)!.sizes.contextSize).toBe(before.sizes.contextSize);
    const after = await set.generate({ tokens: promptTokens(50), maxTokens: 3, ignoreEos: true });
    expect(after.completionTokens).toHaveLength(3);
  });
});

describe('live resize failure outcomes (test-only fault injection)', () => {
  it('an allocation failing before the teardown mark is RejectedIntact', async () => {
    const { set } = await startReplicaSet({ replicas: 1 }, { testOnlyEngineFaults: { failAllocation: 'before_teardown' } });
    const histories = await firstTurns(set, 1);
    const [outcome] = await rebuild(set, { replica: 0, change: { contextSize: 2048 } });
    expect(outcome).toMatchObject({ outcome: 'RejectedIntact', stage: 'engine', engine_preserved: true });
    expect(set.readyInfo(0)!.sizes.contextSize).toBe(1024);
    const [reused] = await nextTurnReuse(set, histories);
    expect(reused).toBeGreaterThanOrEqual(histories[0]!.length - 1);
  });

  it('an allocation failing after the mark is RolledBack to the old sizes, prefixes kept', async () => {
    const { set } = await startReplicaSet({ replicas: 1 }, { testOnlyEngineFaults: { failAllocation: 'after_teardown' } });
    const histories = await firstTurns(set, 2);
    const [outcome] = await rebuild(set, { replica: 0, change: { contextSize: 2048 } });
    expect(outcome).toMatchObject({ outcome: 'RolledBack', engine_preserved: true, restored: { pools: ['kv'] } });
    if (outcome?.outcome !== 'RolledBack') return;
    expect(outcome.reason).toMatch(/after the teardown mark/);
    expect(outcome.restored.sizes.contextSize).toBe(1024);
    expect(outcome.prefixes.kept).toBe(2);
    const reused = await nextTurnReuse(set, histories);
    for (const [c, history] of histories.entries()) expect(reused[c]).toBeGreaterThanOrEqual(history.length - 1);
  });

  it('a failed rollback latches the replica until a process restart, which serves again', async () => {
    const { set } = await startReplicaSet({ replicas: 1 }, { testOnlyEngineFaults: { failAllocation: 'after_teardown', failRestore: true } });
    const pid = set.replicaView()[0]!.pid;
    const [outcome] = await rebuild(set, { replica: 0, change: { contextSize: 2048 } });
    expect(outcome).toMatchObject({ outcome: 'Latched', engine_preserved: false, rollback_error: 'test-only fault: the restore failed' });
    const view = set.replicaView()[0]!;
    expect(view).toMatchObject({ state: 'latched', alive: false, pid });
    expect(view.latchReason).toMatch(/restart the replica/);
    await expect(set.generate({ tokens: promptTokens(20), maxTokens: 2 })).rejects.toBeInstanceOf(NoReplicaError);
    await set.restartReplica(0);
    await waitForState(set, 0, 'ready');
    expect(set.replicaView()[0]!.pid).not.toBe(pid);
    const done = await set.generate({ tokens: promptTokens(20), maxTokens: 2, ignoreEos: true });
    expect(done.completionTokens).toHaveLength(2);
  });
});

describe('rolling rebuild', () => {
  it('resizes 2 replicas one at a time while a load generator runs: 0 failed requests', async () => {
    const { set } = await startReplicaSet({ replicas: 2 });
    let stop = false;
    let completed = 0;
    const failures: string[] = [];
    const states = new Set<string>();
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        try {
          await set.generate({ tokens: promptTokens(60 + (i % 5) * 20, w * 13 + i), maxTokens: 6, ignoreEos: true });
          completed++;
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
    };
    const load = Promise.all([0, 1, 2].map(worker));
    const watcher = setInterval(
      () =>
        states.add(
          set
            .replicaView()
            .map((r) => r.state)
            .join(','),
        ),
      5,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const outcomes = await rebuild(set, { replica: 'all', change: { contextSize: 1536 } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop = true;
    await load;
    clearInterval(watcher);
    expect(outcomes.map((o) => o.outcome)).toEqual(['Applied', 'Applied']);
    expect(failures).toEqual([]);
    expect(completed).toBeGreaterThan(10);
    // One at a time: never both in maintenance.
    expect([...states].some((s) => s === 'maintenance,maintenance')).toBe(false);
    expect([...states]).toEqual(expect.arrayContaining(['maintenance,ready', 'ready,maintenance']));
    expect(set.replicaView().map((r) => r.state)).toEqual(['ready', 'ready']);
  });

  it('with a single replica, requests arriving during the rebuild wait and are served after it', async () => {
    const { set } = await startReplicaSet({ replicas: 1 });
    const running = set.generate({ tokens: promptTokens(100), maxTokens: 40, ignoreEos: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The requests go once the rebuild has entered maintenance (it waits for the running request there).
    const { outcomes: rebuilding } = await rebuildInMaintenance(set, { replica: 0, change: { contextSize: 2048 } });
    const arriving = [0, 1, 2].map((i) => set.generate({ tokens: promptTokens(40, i), maxTokens: 3, ignoreEos: true }));
    const [outcome] = await rebuilding;
    expect(outcome?.outcome).toBe('Applied');
    const results = await Promise.all([running, ...arriving]);
    expect(results.map((r) => r.completionTokens.length)).toEqual([40, 3, 3, 3]);
  });
});
