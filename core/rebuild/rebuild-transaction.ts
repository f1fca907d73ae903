/**
 * The rebuild transaction (DESIGN §5.3), with the engine supplying its two memory operations. The
 * ordering rules live here and nowhere else:
 * - the engine marks "teardown started" before it frees anything; a failure before the mark is
 *   `RejectedIntact` and restore is never called;
 * - a failure after the mark restores the OLD sizes of the touched pools only → `RolledBack`;
 * - a restore that fails too → `Latched`, the only outcome that latches and the only one whose
 *   `engine_preserved` is false;
 * - success → `Applied` with the sizes the engine reports live.
 * An engine process lost during the transaction preserves nothing: `Latched`, whatever the mark said.
 */
import { sizesOfPools, touchedPools, type Pool, type PoolSizes, type PrefixReport, type RebuildChange, type RebuildOutcome } from '../../common/rebuild.js';

/** The engine's state after an allocation: its live sizes and how the slots' prefixes came back. */
export interface PoolsLive {
  sizes: PoolSizes;
  prefixes: PrefixReport;
  timings: { saveMs: number; teardownMs: number; allocateMs: number; restoreMs: number };
}

export interface PoolOperations {
  /** Frees the touched pools and allocates them at the new sizes; calls `markTeardown` before freeing anything. */
  apply(markTeardown: () => void): Promise<PoolsLive>;
  /** Allocates `pools` at `sizes` again: the old sizes of exactly those pools. */
  restore(pools: readonly Pool[], sizes: Partial<PoolSizes>): Promise<PoolsLive>;
  /** True when `error` means the engine process is gone (nothing of it is preserved). */
  isEngineLost(error: unknown): boolean;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The outcome when the engine process is gone: nothing of it is preserved. */
export const engineLostOutcome = (error: unknown): RebuildOutcome => ({
  outcome: 'Latched',
  engine_preserved: false,
  reason: messageOf(error),
  rollback_error: 'the engine process is gone; nothing could be restored',
});

export async function runRebuildTransaction(current: PoolSizes, change: RebuildChange, operations: PoolOperations): Promise<RebuildOutcome> {
  const pools = touchedPools(change);
  let teardownStarted = false;
  try {
    const live = await operations.apply(() => {
      teardownStarted = true;
    });
    return { outcome: 'Applied', engine_preserved: true, pools, sizes: live.sizes, prefixes: live.prefixes, timings: live.timings };
  } catch (error) {
    if (operations.isEngineLost(error)) return engineLostOutcome(error);
    const reason = messageOf(error);
    if (!teardownStarted) return { outcome: 'RejectedIntact', engine_preserved: true, stage: 'engine', reason };
    try {
      const live = await operations.restore(pools, sizesOfPools(current, pools));
      return { outcome: 'RolledBack', engine_preserved: true, reason, restored: { pools, sizes: live.sizes }, prefixes: live.prefixes };
    } catch (rollbackError) {
      return { outcome: 'Latched', engine_preserved: false, reason, rollback_error: messageOf(rollbackError) };
    }
  }
}
