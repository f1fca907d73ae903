/**
 * The replica set's side of live resizes (DESIGN §5): the pre-check of one replica or all, one rebuild at
 * a time, each replica offered to `rollingRebuild` as a target (its engine — a node-llama-cpp engine's
 * client or a llama-server child's restart — and live sizes, entering maintenance), and each outcome
 * applied to the replica: new sizes for its later starts, its prefix index moved with the slots, ready
 * again — or latched when the rollback failed too (a llama-server replica whose child did not come back
 * at the old sizes is down instead, and heals as after any exit).
 */
import type { ReadyInfo } from '../../common/engine-protocol.js';
import {
  poolSizesOf,
  type PrecheckRequest,
  type RebuildChange,
  type RebuildOutcome,
  type RebuildRequest,
  type ReplicaRebuildOutcome,
  type ReplicaVerdict,
} from '../../common/rebuild.js';
import { rollingRebuild, type OnRebuildProgress, type RebuildTarget } from '../rebuild/replica-rebuild.js';
import type { LogSink } from '../logging/core-log.js';
import { followReEvaluation } from './re-evaluation-watch.js';
import type { Replica, ReplicaState } from './replica.js';
import { RebuildInProgressError } from './replica-errors.js';
import type { RoutingState } from './routing-state.js';

export interface RebuildHost {
  /** The replicas `which` names (one index or all). */
  scope(which: number | 'all'): Replica[];
  setState(replica: Replica, state: ReplicaState): void;
  routing: RoutingState;
  log: LogSink;
}

export class ReplicaRebuilds {
  private rebuilding = false;

  constructor(private readonly host: RebuildHost) {}

  /** The pre-check of a rebuild for one replica or all; touches nothing. */
  async precheck(request: PrecheckRequest): Promise<ReplicaVerdict[]> {
    return Promise.all(
      this.host.scope(request.replica).map(async (replica): Promise<ReplicaVerdict> => {
        const engine = this.target(replica, request.change).engine;
        if ('unavailable' in engine) return { replica: replica.index, fits: false, reason: engine.unavailable };
        const trained = replica.info?.model?.trainContextSize ?? 0;
        const context = request.change.contextSize;
        const warning =
          context !== undefined && trained > 0 && context > trained
            ? `${context} tokens is beyond the ${trained} the model was trained on: answers that run past it may lose their thread`
            : undefined;
        return engine.client.precheck(request.change).then(
          (verdict) => ({ replica: replica.index, ...verdict, ...(warning ? { warning } : {}) }),
          (error: unknown) => ({ replica: replica.index, fits: false, reason: (error as Error).message }),
        );
      }),
    );
  }

  /** A live resize of one replica, or a rolling one of all; one rebuild at a time. */
  async rebuild(request: RebuildRequest, onProgress: OnRebuildProgress = () => {}): Promise<ReplicaRebuildOutcome[]> {
    if (this.rebuilding) throw new RebuildInProgressError();
    this.rebuilding = true;
    try {
      const targets = this.host.scope(request.replica).map((replica) => this.target(replica, request.change));
      return await rollingRebuild(targets, request, onProgress);
    } finally {
      this.rebuilding = false;
    }
  }

  private target(replica: Replica, change: RebuildChange): RebuildTarget {
    return {
      index: replica.index,
      get engine() {
        const { driver } = replica;
        if (!driver.local) return { unavailable: `replica ${replica.index} is remote: its server is resized where it runs, not by Manifold` };
        if (!driver.rebuilder) return { unavailable: `replica ${replica.index}'s engine kind cannot be rebuilt live` };
        if (!replica.routable || !driver.client || !replica.info) return { unavailable: `replica ${replica.index} is ${replica.state}, not ready` };
        // gpuLayers as asked for (`auto` stays `auto`), so a rollback restores the request, not its resolution.
        const sizes = { ...poolSizesOf(replica.info.sizes), gpuLayers: driver.local.loadOptions.gpuLayers ?? 'auto' };
        return { ...driver.rebuilder(sizes), sizes };
      },
      enterMaintenance: () => this.host.setState(replica, 'maintenance'),
      settle: (outcome, info) => this.settle(replica, change, outcome, info),
    };
  }

  private settle(replica: Replica, change: RebuildChange, outcome: RebuildOutcome, info: ReadyInfo | null): void {
    const local = replica.driver.local;
    if (!local || !replica.driver.client) return; // the engine exited: its exit already set the state and heals it
    if (info) replica.info = info;
    const { routing } = this.host;
    switch (outcome.outcome) {
      case 'Applied':
        local.updateLoad(change);
        routing.remap(replica.index, outcome.prefixes);
        break;
      case 'RolledBack':
        routing.remap(replica.index, outcome.prefixes);
        break;
      case 'Latched':
        routing.forgetReplica(replica.index);
        replica.latchReason = `rebuild failed (${outcome.reason}) and so did its rollback (${outcome.rollback_error}); restart the replica`;
        this.host.log(`[replica ${replica.index}] latched: ${replica.latchReason}`, 'error');
        this.host.setState(replica, 'latched');
        return;
      case 'RejectedIntact':
        break;
    }
    this.host.setState(replica, 'ready');
    const { driver } = replica;
    if (driver.activity && 'prefixes' in outcome && outcome.prefixes.slots.some((s) => s.restoredBy === 're_evaluation')) {
      void followReEvaluation({ activity: () => driver.activity!() }, (progress) => {
        replica.reEvaluation = progress;
      });
    }
  }
}
