/**
 * The replica set (DESIGN §3): N engine children behind one front. It owns their lifecycle — starting them
 * in parallel, each pinned to its own cores, healing a dead one as the heal policy says, stopping them —
 * and the aggregates and views the rest of the app shows. Requests go through its dispatcher (the
 * core-held queue and late binding, `request-dispatcher.ts`); live resizes through `replica-rebuilds.ts`;
 * what the router reads lives in `routing-state.ts`; embeddings go to the least loaded replica
 * (`embedding-dispatch.ts`); the views are `replica-views.ts`'.
 */
import type { GenerateRequestInput, ReadyInfo } from '../../common/engine-protocol.js';
import type { PrecheckRequest, RebuildRequest, ReplicaRebuildOutcome, ReplicaVerdict } from '../../common/rebuild.js';
import { planReplicas, type MachineFacts, type ReplicaPlan, type RoutingPolicy, type RunConfig } from '../config/run-config.js';
import { pinProcess } from '../cpu/cpu-pinning.js';
import { partitionCores, readCpuTopology } from '../cpu/cpu-topology.js';
import type { EngineGpuState } from '../gpu/gpu-report.js';
import { DEFAULT_QUEUE_SETTINGS, type QueueSettings } from '../queue/request-queue.js';
import type { QueueStats } from '../queue/queue-stats.js';
import type { OnRebuildProgress } from '../rebuild/replica-rebuild.js';
import type { DispatchObserver } from '../metrics/request-metrics.js';
import { expectedModelFrom, type ExpectedModel } from '../remote/model-match.js';
import type { ExitReason } from '../supervisor/child-life.js';
import { decideHeal, DEFAULT_HEAL_POLICY, type HealPolicy } from './heal-policy.js';
import { Replica, type ReplicaState } from './replica.js';
import { createReplicaDriver, engineKind } from '../engine-kinds/engine-kinds.js';
import type { DriverSetup } from '../kind/engine-kind.js';
import type { ReplicaDriver } from '../kind/replica-driver.js';
import { EmbeddingsUnsupportedError, NoReplicaError } from './replica-errors.js';
import { embedOnLeastLoaded } from './embedding-dispatch.js';
import { EmbeddingEngine } from './embedding-engine.js';
import { globalSlotsView, replicaViews, slotOffset, type GlobalSlotView, type ReplicaView } from './replica-views.js';
import { ReplicaRebuilds } from './replica-rebuilds.js';
import { RequestDispatcher, type ReplicaGenerateOptions, type ReplicaGenerateResult } from './request-dispatcher.js';
import { RoutingState } from './routing-state.js';

export interface ReplicaSetOptions extends DriverSetup {
  routing?: RoutingPolicy;
  heal?: Partial<HealPolicy>;
  /** The core-held queue's bounds (config `queue`). */
  queue?: Partial<QueueSettings>;
  /** Pin each replica to its own whole physical cores (Linux; config `pinCores`, on unless false). */
  pinCores?: boolean;
  /** Where the CPU topology is read (tests point it at fixtures). */
  cpuTopologyRoot?: string;
  /** Told each binding's queue wait and routing time (the workstation's request metrics). */
  dispatchObserver?: DispatchObserver;
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  private readonly routing: RoutingState;
  private readonly dispatcher: RequestDispatcher;
  private readonly rebuilds: ReplicaRebuilds;
  private readonly heal: HealPolicy;
  private closing = false;
  /** Serves embeddings when the local replicas are all llama-server children (embedding-engine.ts); null otherwise. */
  private readonly embeddingEngine: EmbeddingEngine | null;
  /** The model every remote replica must serve (its name until the workstation has read the file's header). */
  private expected: ExpectedModel;
  private readonly readyListeners = new Set<(ready: number) => void>();

  constructor(private readonly options: ReplicaSetOptions) {
    this.heal = { ...DEFAULT_HEAL_POLICY, ...options.heal };
    this.routing = new RoutingState(options.routing ?? 'prefix');
    this.expected = expectedModelFrom(options.modelPath, null);
    this.replicas = options.plans.map((plan) => {
      const replica: Replica = new Replica(
        plan,
        createReplicaDriver(plan, this.options, () => this.expected, { pin: (pid) => this.pinReplica(replica, pid), cpus: () => replica.cpus }),
      );
      replica.driver.on('ready', (info) => {
        replica.info = info;
        replica.incarnation++;
        replica.slotLastUsed.clear();
        replica.lastReadyAt = Date.now();
        replica.latchReason = null;
        this.setState(replica, 'ready');
        const ready = this.replicas.filter((r) => r.state === 'ready').length;
        for (const listener of this.readyListeners) listener(ready);
      });
      replica.driver.on('exit', (reason) => this.onReplicaExit(replica, reason));
      return replica;
    });
    this.dispatcher = new RequestDispatcher({
      replicas: this.replicas,
      routing: this.routing,
      queue: { ...DEFAULT_QUEUE_SETTINGS, ...options.queue },
      log: options.log,
      slotOffset: (index) => slotOffset(this.replicas, index),
      observer: options.dispatchObserver,
    });
    // Where no local replica's kind answers embeddings, an embedding engine does (embedding-engine.ts).
    const local = options.plans.filter((plan) => !plan.remote);
    this.embeddingEngine =
      local.length > 0 && local.every((plan) => !engineKind(plan.engineKind ?? '').embeds)
        ? new EmbeddingEngine({ spawn: options.spawn, modelPath: options.modelPath, contextSize: local[0]!.engine.contextSize ?? 4096, log: options.log })
        : null;
    this.rebuilds = new ReplicaRebuilds({
      scope: (which) => (which === 'all' ? this.replicas : [this.replica(which)]),
      setState: (replica, state) => this.setState(replica, state),
      routing: this.routing,
      log: options.log,
    });
  }

  /** The replica set a run config describes on this machine (plans, routing policy, heal policy, queue). */
  static fromConfig(config: RunConfig, machine: MachineFacts, options: Pick<ReplicaSetOptions, 'spawn' | 'log'> & Partial<ReplicaSetOptions>): ReplicaSet {
    return new ReplicaSet({
      plans: planReplicas(config, machine),
      modelPath: config.model,
      ...(config.routing ? { routing: config.routing } : {}),
      ...(config.pinCores !== undefined ? { pinCores: config.pinCores } : {}),
      ...options,
      heal: { ...config.heal, ...options.heal },
      queue: { ...config.queue, ...options.queue },
    });
  }

  /** Called with the count of ready replicas each time one becomes ready (the loader's progress). */
  onReady(listener: (ready: number) => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  /** The plans of the engines that run on this machine (remote replicas hold their weights elsewhere). */
  get localPlans(): readonly ReplicaPlan[] {
    return this.options.plans.filter((p) => p.remote === null);
  }

  /** The model every remote replica must serve, from the validated file (name, vocabulary, parameters). */
  expectModel(expected: ExpectedModel): void {
    this.expected = expected;
  }

  /** Where every later start, heal and weights rebuild loads the model from (the arena, once it is filled). */
  loadModelFrom(modelPath: string): void {
    for (const replica of this.replicas) replica.driver.local?.updateLoad({ modelPath });
  }

  /** What each replica's engine last said of its GPU memory, for the GPU report. */
  engineGpuStates(): EngineGpuState[] {
    return this.replicas.map((r) => ({ replica: r.index, gpus: r.plan.gpus, backend: r.info?.backend ?? null, vram: r.info?.vram ?? null }));
  }

  /** Starts every replica in parallel; fails only when none comes up (each failure is logged and healed). */
  async start(): Promise<void> {
    this.closing = false;
    await this.planCpuSets();
    const results = await Promise.allSettled(this.replicas.map((r) => this.startReplica(r)));
    if (!results.some((r) => r.status === 'fulfilled')) {
      const reasons = results.map((r, i) => `replica ${i}: ${r.status === 'rejected' ? (r.reason as Error).message : 'ok'}`);
      throw new NoReplicaError(`no replica started (${reasons.join('; ')})`);
    }
  }

  /** Disjoint sets of whole cores, one per replica (DESIGN §3); no pinning, and a log line, when that cannot be. */
  private async planCpuSets(): Promise<void> {
    if (this.options.pinCores === false) return;
    if (process.platform !== 'linux') {
      this.options.log(`CPU pinning: not on ${process.platform} (Linux only); replicas share the cores`);
      return;
    }
    // Only local engines run on this machine's cores.
    const local = this.replicas.filter((r) => r.driver.local);
    if (local.length === 0) return;
    const topology = await readCpuTopology(this.options.cpuTopologyRoot);
    const partition = 'cores' in topology ? partitionCores(topology.cores, local.length) : { reason: topology.unreadable };
    if ('reason' in partition) {
      this.options.log(`CPU pinning: off (${partition.reason})`);
      return;
    }
    for (const [i, replica] of local.entries()) replica.cpus = partition.sets[i]!;
    this.options.log(`CPU pinning: ${local.map((r) => `replica ${r.index} → CPUs ${r.cpus.join(',')}`).join('; ')}`);
  }

  private async pinReplica(replica: Replica, pid: number): Promise<void> {
    if (replica.cpus.length === 0) return;
    try {
      await pinProcess(pid, replica.cpus);
    } catch (error) {
      this.options.log(`[replica ${replica.index}] CPU pinning failed (${(error as Error).message}); it runs on every core`, 'warn');
    }
  }

  private async startReplica(replica: Replica): Promise<ReadyInfo> {
    this.setState(replica, 'starting');
    replica.lastStartAt = Date.now();
    return replica.driver.start();
  }

  /** Sets a replica's state; the dispatcher looks again for work it can place (or refuses what nobody can serve). */
  private setState(replica: Replica, state: ReplicaState): void {
    replica.state = state;
    this.dispatcher.replicaStateChanged();
  }

  private onReplicaExit(replica: Replica, reason: ExitReason): void {
    this.routing.forgetReplica(replica.index);
    replica.info = null;
    if (this.closing || reason.kind === 'stopped') {
      this.setState(replica, 'stopped');
      return;
    }
    if (reason.kind === 'unreachable') {
      // A remote's heal is its link's own reconnect (with back-off); it says `ready` when the peer answers.
      this.setState(replica, 'healing');
      return;
    }
    const decision = decideHeal(this.heal, replica, Date.now());
    replica.consecutiveFailures = decision.failures;
    if (decision.kind === 'failed') {
      this.setState(replica, 'failed');
      this.options.log(`[replica ${replica.index}] failed ${decision.failures} times in a row; not restarting until asked`, 'error');
      return;
    }
    this.setState(replica, 'healing');
    this.options.log(
      `[replica ${replica.index}] healing in ${decision.delayMs} ms (failure ${decision.failures} of ${this.heal.maxConsecutiveFailures})`,
      'warn',
    );
    replica.healTimer = setTimeout(() => {
      replica.healTimer = undefined;
      if (this.closing) return;
      this.startReplica(replica).catch(() => {
        // Logged by the supervisor; its exit event schedules the next attempt.
      });
    }, decision.delayMs);
  }

  /** Starts a `failed`, `latched` (or stopped) replica again at the user's request, clearing its failure count. */
  async restartReplica(index: number): Promise<ReadyInfo> {
    const replica = this.replica(index);
    clearTimeout(replica.healTimer);
    replica.consecutiveFailures = 0;
    if (replica.driver.state === 'ready') await replica.driver.stop();
    return this.startReplica(replica);
  }

  /** Queues one generation; it is bound to a replica when one has a free slot, and retried if that engine dies before the first token. */
  generate(request: GenerateRequestInput, options: ReplicaGenerateOptions = {}): Promise<ReplicaGenerateResult> {
    return this.dispatcher.generate(request, options);
  }

  /**
   * One embedding vector per input, from the least loaded ready replica that serves embeddings
   * (`embedding-dispatch.ts`).
   */
  async embed(inputs: readonly (readonly number[])[]): Promise<number[][]> {
    const engine = this.embeddingEngine;
    if (!engine) return embedOnLeastLoaded(this.replicas, inputs, this.options.log);
    // Peers that serve embeddings first; the embedding engine when none does, or none could answer.
    return embedOnLeastLoaded(this.replicas, inputs, this.options.log).catch((error: unknown) => {
      if (error instanceof EmbeddingsUnsupportedError || error instanceof NoReplicaError) return engine.embed(inputs);
      throw error;
    });
  }

  /** Seconds a client refused for a full queue or no replica should wait before trying again. */
  retryAfterSeconds(): number {
    return this.dispatcher.retryAfterSeconds();
  }

  /** The queue's counters and wait histogram. */
  get queueStats(): QueueStats {
    return this.dispatcher.queue.stats;
  }

  /** The pre-check of a rebuild for one replica or all; touches nothing. */
  precheck(request: PrecheckRequest): Promise<ReplicaVerdict[]> {
    return this.rebuilds.precheck(request);
  }

  /** A live resize of one replica, or a rolling one of all (DESIGN §5); one rebuild at a time. */
  rebuild(request: RebuildRequest, onProgress?: OnRebuildProgress): Promise<ReplicaRebuildOutcome[]> {
    return this.rebuilds.rebuild(request, onProgress);
  }

  private replica(index: number): Replica {
    const replica = this.replicas[index];
    if (!replica) throw new RangeError(`no replica ${index} (there are ${this.replicas.length})`);
    return replica;
  }

  /** Prompt tokens of `tokens` the index says `replica` holds, in whole blocks (what the router sees). */
  heldPrefixTokens(replica: number, tokens: readonly number[]): number {
    return this.routing.heldPrefixTokens(replica, tokens);
  }

  setRoutingPolicy(policy: RoutingPolicy): void {
    this.routing.setPolicy(policy);
  }

  get routingPolicy(): RoutingPolicy {
    return this.routing.policy;
  }

  /** What replica `index`'s engine reported when it last loaded or rebuilt (null while it has none). */
  readyInfo(index: number): ReadyInfo | null {
    return this.replica(index).info;
  }

  /** The driver of replica `index` (tests signal its process; bench/faults.ts kills one). */
  driverOf(index: number): ReplicaDriver {
    return this.replica(index).driver;
  }

  get size(): number {
    return this.replicas.length;
  }

  get totalSlots(): number {
    return this.replicas.reduce((sum, r) => sum + r.slots, 0);
  }

  /** Requests waiting in the core-held queue for a slot. */
  get waiting(): number {
    return this.dispatcher.queue.size;
  }

  /** The longest context every living replica can take (min over the living); 0 when none lives. */
  get maxContext(): number {
    const living = this.replicas.filter((r) => r.routable && r.info);
    return living.length ? Math.min(...living.map((r) => r.info!.sizes.contextSize)) : 0;
  }

  get alive(): boolean {
    return this.replicas.some((r) => r.routable);
  }

  info(): { replicas: number; replicas_alive: number; model: ReadyInfo['model'] | null; backend: string | null } {
    const living = this.replicas.filter((r) => r.routable && r.info);
    return {
      replicas: this.replicas.length,
      replicas_alive: living.length,
      model: living[0]?.info?.model ?? null,
      backend: living[0]?.info?.backend ?? null,
    };
  }

  /** Each replica as the dashboard shows it (`replica-views.ts`). */
  replicaView(): ReplicaView[] {
    return replicaViews(this.replicas, this.routing);
  }

  /** Every living replica's slots, numbered globally, each with its replica. */
  slotsView(): Promise<GlobalSlotView[]> {
    return globalSlotsView(this.replicas, this.routing);
  }

  /** Stops every replica (unload); healing stops too, and whatever still waits is refused. */
  async close(): Promise<void> {
    this.closing = true;
    for (const r of this.replicas) clearTimeout(r.healTimer);
    await Promise.all([...this.replicas.map((r) => r.driver.stop()), this.embeddingEngine?.close()]);
    for (const r of this.replicas) this.setState(r, 'stopped');
    await Promise.all(this.replicas.map((r) => r.driver.close()));
  }
}
