/**
 * A live resize of replicas (DESIGN §5): for each replica, the pre-check, the barrier (maintenance:
 * the router sends it nothing new while running work finishes), then the transaction; `all` rolls
 * through the replicas one at a time so the others keep serving, and stops at the first outcome that
 * is not Applied (the rest are reported Skipped). The replica set supplies the targets and acts on
 * each outcome (ready again with new sizes, or latched).
 */
import type { ReadyInfo, Rebuilt } from '../../common/engine-protocol.js';
import {
  poolSizesOf,
  type PoolSizes,
  type RebuildOutcome,
  type RebuildProgress,
  type RebuildRequest,
  type ReplicaRebuildOutcome,
} from '../../common/rebuild.js';
import type { EngineClient } from '../engine/engine-client.js';
import { BarrierTimeoutError, waitForIdle } from './barrier.js';
import { engineLostOutcome, runRebuildTransaction, type PoolsLive } from './rebuild-transaction.js';

/**
 * What a rebuild asks of a replica's engine: a node-llama-cpp engine's client, or a llama-server
 * replica's restart (llama-server/llama-server-rebuild.ts).
 */
export type RebuildEngine = Pick<EngineClient, 'precheck' | 'activity' | 'rebuild' | 'restore'>;

/** What a rebuild needs of one replica. */
export interface RebuildTarget {
  readonly index: number;
  /** The engine, when the replica is ready to be rebuilt (with how to tell that its process is gone); otherwise why not. */
  readonly engine: { client: RebuildEngine; sizes: PoolSizes; isEngineLost: (error: unknown) => boolean } | { unavailable: string };
  enterMaintenance(): void;
  /** Called once with the outcome; `info` is the engine's state after Applied or RolledBack. */
  settle(outcome: RebuildOutcome, info: ReadyInfo | null): void;
}

export type OnRebuildProgress = (progress: RebuildProgress) => void;

const live = (rebuilt: Rebuilt): PoolsLive => ({
  sizes: poolSizesOf(rebuilt.info.sizes),
  prefixes: rebuilt.prefixes,
  timings: rebuilt.timings,
});

export async function rebuildReplica(target: RebuildTarget, request: RebuildRequest, onProgress: OnRebuildProgress): Promise<ReplicaRebuildOutcome> {
  const finish = (outcome: RebuildOutcome, info: ReadyInfo | null): ReplicaRebuildOutcome => {
    target.settle(outcome, info);
    const result = { replica: target.index, ...outcome };
    onProgress({ replica: target.index, stage: 'done', outcome: result });
    return result;
  };
  const refuse = (stage: 'precheck' | 'barrier' | 'engine', reason: string): ReplicaRebuildOutcome =>
    finish({ outcome: 'RejectedIntact', engine_preserved: true, stage, reason }, null);

  const engine = target.engine;
  if ('unavailable' in engine) return refuse('precheck', engine.unavailable);
  const { client, sizes, isEngineLost } = engine;
  onProgress({ replica: target.index, stage: 'precheck', outcome: null });
  if (!request.skipPrecheck) {
    try {
      const verdict = await client.precheck(request.change);
      if (!verdict.fits) return refuse('precheck', verdict.reason);
    } catch (error) {
      return refuse('precheck', (error as Error).message);
    }
  }
  target.enterMaintenance();
  onProgress({ replica: target.index, stage: 'barrier', outcome: null });
  try {
    await waitForIdle(() => client.activity(), { timeoutMs: request.barrierTimeoutMs });
  } catch (error) {
    if (error instanceof BarrierTimeoutError) return refuse('barrier', `replica ${target.index}: ${error.message}`);
    if (!isEngineLost(error)) return refuse('barrier', `replica ${target.index}: its activity could not be read (${(error as Error).message})`);
    return finish(engineLostOutcome(error), null);
  }
  onProgress({ replica: target.index, stage: 'rebuilding', outcome: null });
  let info: ReadyInfo | null = null;
  const keep = (rebuilt: Rebuilt): PoolsLive => {
    info = rebuilt.info;
    return live(rebuilt);
  };
  const outcome = await runRebuildTransaction(sizes, request.change, {
    apply: (markTeardown) => client.rebuild(request.change, { skipPrecheck: request.skipPrecheck, onTeardown: markTeardown }).then(keep),
    restore: (pools, old) => client.restore(pools, old).then(keep),
    isEngineLost,
  });
  return finish(outcome, info);
}

/** One replica, or every replica in turn (stopping at the first outcome that is not Applied). */
export async function rollingRebuild(
  targets: readonly RebuildTarget[],
  request: RebuildRequest,
  onProgress: OnRebuildProgress,
): Promise<ReplicaRebuildOutcome[]> {
  const outcomes: ReplicaRebuildOutcome[] = [];
  let stopper: ReplicaRebuildOutcome | undefined;
  for (const target of targets) {
    if (stopper) {
      outcomes.push({
        replica: target.index,
        outcome: 'Skipped',
        reason: `replica ${stopper.replica} ended ${stopper.outcome}; the rolling rebuild stopped there`,
      });
      continue;
    }
    const outcome = await rebuildReplica(target, request, onProgress);
    outcomes.push(outcome);
    if (outcome.outcome !== 'Applied') stopper = outcome;
  }
  return outcomes;
}
