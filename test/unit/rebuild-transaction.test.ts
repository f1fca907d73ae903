/**
 * The rebuild transaction's ordering rules, as pure logic with scripted pool operations (no engine here:
 * the same rules are exercised on real engines in test/integration/live-rebuild.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Pool, PoolSizes } from '../../common/rebuild.js';
import { runRebuildTransaction, type PoolOperations, type PoolsLive } from '../../core/rebuild/rebuild-transaction.js';

const current: PoolSizes = { contextSize: 1024, slots: 2, kvType: 'f16', gpuLayers: 10 };
const noPrefixes = { kept: 0, dropped: 0, slots: [] };
const timings = { saveMs: 1, teardownMs: 1, allocateMs: 1, restoreMs: 1 };
const liveAt = (sizes: PoolSizes): PoolsLive => ({ sizes, prefixes: noPrefixes, timings });

class LostEngine extends Error {}

/** Scripted operations that record what was called, failing where told to. */
function scriptedOperations(script: {
  apply: 'ok' | 'fail-before-mark' | 'fail-after-mark' | 'lost-after-mark';
  restore?: 'ok' | 'fail';
  liveSizes?: PoolSizes;
}) {
  const calls: string[] = [];
  const restores: { pools: readonly Pool[]; sizes: Partial<PoolSizes> }[] = [];
  const operations: PoolOperations = {
    apply: async (markTeardown) => {
      calls.push('apply');
      if (script.apply === 'fail-before-mark') throw new Error('no memory for the new context');
      markTeardown();
      calls.push('marked');
      if (script.apply === 'fail-after-mark') throw new Error('allocation failed after freeing');
      if (script.apply === 'lost-after-mark') throw new LostEngine('engine exited');
      return liveAt(script.liveSizes ?? current);
    },
    restore: async (pools, sizes) => {
      calls.push('restore');
      restores.push({ pools, sizes });
      if (script.restore === 'fail') throw new Error('old sizes do not fit any more');
      return liveAt({ ...current, ...sizes });
    },
    isEngineLost: (error) => error instanceof LostEngine,
  };
  return { operations, calls, restores };
}

describe('rebuild transaction (pure logic, scripted pool operations)', () => {
  it('a failure before the teardown mark is RejectedIntact and restore is never called', async () => {
    const { operations, calls } = scriptedOperations({ apply: 'fail-before-mark' });
    const outcome = await runRebuildTransaction(current, { contextSize: 4096 }, operations);
    expect(outcome).toEqual({ outcome: 'RejectedIntact', engine_preserved: true, stage: 'engine', reason: 'no memory for the new context' });
    expect(calls).toEqual(['apply']);
  });

  it('a failure after the mark restores the old sizes of the touched kv pool only', async () => {
    const { operations, calls, restores } = scriptedOperations({ apply: 'fail-after-mark' });
    const outcome = await runRebuildTransaction(current, { contextSize: 4096, slots: 4 }, operations);
    expect(calls).toEqual(['apply', 'marked', 'restore']);
    expect(restores).toEqual([{ pools: ['kv'], sizes: { contextSize: 1024, slots: 2, kvType: 'f16' } }]);
    expect(restores[0]!.sizes).not.toHaveProperty('gpuLayers');
    expect(outcome.outcome).toBe('RolledBack');
    if (outcome.outcome !== 'RolledBack') return;
    expect(outcome.engine_preserved).toBe(true);
    expect(outcome.reason).toBe('allocation failed after freeing');
    expect(outcome.restored.pools).toEqual(['kv']);
  });

  it('a weights change touches (and restores) both pools', async () => {
    const { operations, restores } = scriptedOperations({ apply: 'fail-after-mark' });
    const outcome = await runRebuildTransaction(current, { gpuLayers: 20 }, operations);
    expect(outcome.outcome).toBe('RolledBack');
    expect(restores).toEqual([{ pools: ['kv', 'weights'], sizes: { contextSize: 1024, slots: 2, kvType: 'f16', gpuLayers: 10 } }]);
  });

  it('only a failed rollback latches, and only Latched has engine_preserved false', async () => {
    const { operations, calls } = scriptedOperations({ apply: 'fail-after-mark', restore: 'fail' });
    const outcome = await runRebuildTransaction(current, { slots: 8 }, operations);
    expect(calls).toEqual(['apply', 'marked', 'restore']);
    expect(outcome).toEqual({
      outcome: 'Latched',
      engine_preserved: false,
      reason: 'allocation failed after freeing',
      rollback_error: 'old sizes do not fit any more',
    });
    for (const script of [{ apply: 'ok' }, { apply: 'fail-before-mark' }, { apply: 'fail-after-mark', restore: 'ok' }] as const) {
      const other = await runRebuildTransaction(current, { slots: 8 }, scriptedOperations(script).operations);
      expect(other.outcome).not.toBe('Latched');
      expect(other.engine_preserved).toBe(true);
    }
  });

  it('success reports the sizes the engine says are live, not the ones asked for', async () => {
    const live: PoolSizes = { contextSize: 4352, slots: 3, kvType: 'f16', gpuLayers: 10 };
    const { operations, calls } = scriptedOperations({ apply: 'ok', liveSizes: live });
    const outcome = await runRebuildTransaction(current, { contextSize: 4321, slots: 3 }, operations);
    expect(calls).toEqual(['apply', 'marked']);
    expect(outcome).toMatchObject({ outcome: 'Applied', engine_preserved: true, pools: ['kv'], sizes: live });
  });

  it('an engine lost during the transaction is Latched and no restore is attempted', async () => {
    const { operations, calls } = scriptedOperations({ apply: 'lost-after-mark' });
    const outcome = await runRebuildTransaction(current, { contextSize: 2048 }, operations);
    expect(outcome.outcome).toBe('Latched');
    expect(outcome.engine_preserved).toBe(false);
    expect(calls).not.toContain('restore');
  });
});
