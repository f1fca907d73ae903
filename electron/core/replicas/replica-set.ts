/**
 * The replica set (DESIGN §3): N engine children behind one front. It starts them in parallel, heals a
 * dead one in the background (a cooldown with exponential back-off, then `failed` after a crash loop),
 * routes each request through the router and the exact prefix index, fails a request over to another
 * replica when its engine dies before the first token, and computes the aggregates the rest of the app
 * shows (total slots, waiting, max context, alive, info, the global slot view, the replica view). It is
 * also the target of live resizes: a replica in maintenance gets nothing new (a request that finds every
 * replica in maintenance waits for one), and a rebuild's outcome sets its sizes, index and state.
 */
import type { ReplicaViewData } from '../../../common/contract.js';
import type { GenerateDone, GenerateRequestInput, LoadOptionsInput, ReadyInfo, SlotView } from '../../../common/engine-protocol.js';
import { poolSizesOf, type PrecheckRequest, type PrefixReport, type RebuildChange, type RebuildOutcome, type RebuildRequest, type ReplicaRebuildOutcome, type ReplicaVerdict } from '../../../common/rebuild.js';
import { planReplicas, type MachineFacts, type ReplicaPlan, type RoutingPolicy, type RunConfig } from '../config/run-config.js';
import { pinProcess } from '../cpu/cpu-pinning.js';
import { partitionCores, readCpuTopology } from '../cpu/cpu-topology.js';
import { EngineExitedError } from '../engine/engine-client.js';
import type { EngineGpuState } from '../gpu/gpu-report.js';
import type { SpawnEngine } from '../engine/engine-process.js';
import { BLOCK_TOKENS, blockHashes } from '../router/block-hash.js';
import { ExactPrefixIndex } from '../router/prefix-index.js';
import { Router, type RouteCandidate } from '../router/router.js';
import { rollingRebuild, type OnRebuildProgress, type RebuildTarget } from '../rebuild/replica-rebuild.js';
import type { LogSink } from '../logging/core-log.js';
import { EngineSupervisor, type ExitReason } from '../supervisor/engine-supervisor.js';

export type ReplicaState = 'starting' | 'ready' | 'maintenance' | 'latched' | 'healing' | 'failed' | 'stopped';

export interface HealPolicy {
  /** At most one restart per cooldown; each further consecutive failure doubles the wait. */
  cooldownMs: number;
  /** Consecutive failures (crashes before staying up a cooldown, or failed starts) before `failed`. */
  maxConsecutiveFailures: number;
}

export const DEFAULT_HEAL_POLICY: HealPolicy = { cooldownMs: 60_000, maxConsecutiveFailures: 5 };

export interface ReplicaSetOptions {
  plans: readonly ReplicaPlan[];
  modelPath: string;
  spawn: SpawnEngine;
  log: LogSink;
  routing?: RoutingPolicy;
  heal?: Partial<HealPolicy>;
  watchdog?: { heartbeatMs?: number; hangTimeoutMs?: number };
  stopGraceMs?: number;
  /** Pin each replica to its own whole physical cores (Linux; config `pinCores`, on unless false). */
  pinCores?: boolean;
  /** Where the CPU topology is read (tests point it at fixtures). */
  cpuTopologyRoot?: string;
  /** Test-only: fault injection for live resize, given to every engine of the set (never from a config). */
  testOnlyEngineFaults?: LoadOptionsInput['testOnlyFaults'];
}

export type ReplicaView = ReplicaViewData;

export type GlobalSlotView = SlotView & { replica: number; replicaSlot: number };

export interface ReplicaGenerateResult extends GenerateDone {
  replica: number;
  /** The slot numbered across all replicas, as in the global slot view. */
  globalSlot: number | null;
  /** Replicas that died under this request before its first token and were routed around. */
  failedOver: number[];
}

export interface ReplicaGenerateOptions {
  onTokens?: (chunk: { tokens: number[]; text: string; replica: number }) => void;
  signal?: AbortSignal;
}

export class NoReplicaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoReplicaError';
  }
}

/** The engine serving a stream died after tokens had been sent: the stream cannot be continued. */
export class ReplicaDiedError extends Error {
  constructor(
    readonly replica: number,
    readonly tokensSent: number,
  ) {
    super(`replica ${replica} died mid-stream after ${tokensSent} tokens; the response is incomplete`);
    this.name = 'ReplicaDiedError';
  }
}

/** A rebuild was asked for while another one is running. */
export class RebuildInProgressError extends Error {
  constructor() {
    super('another rebuild is in progress; wait for its outcome');
    this.name = 'RebuildInProgressError';
  }
}

/** Conversations whose last replica is remembered for the router's tie-break (the oldest forgotten first). */
const CONVERSATIONS_REMEMBERED = 4096;

/** Weight of the newest sample in the measured rates. */
const EWMA = 0.3;
/** Prefills shorter than this say little about a replica's rate. */
const MIN_RATE_SAMPLE_TOKENS = 256;

class Replica {
  state: ReplicaState = 'starting';
  /** Why a latched replica takes no requests (its failed rebuild's reasons). */
  latchReason: string | null = null;
  info: ReadyInfo | null = null;
  /** The logical CPUs its engine is pinned to; empty when not pinned. */
  cpus: number[] = [];
  running = 0;
  cacheHitTokens = 0;
  promptTokens = 0;
  completionTokens = 0;
  consecutiveFailures = 0;
  lastStartAt = 0;
  lastReadyAt = 0;
  healTimer: NodeJS.Timeout | undefined;
  prefillTokensPerMs: number | null = null;
  serviceMs: number | null = null;

  constructor(
    readonly plan: ReplicaPlan,
    readonly supervisor: EngineSupervisor,
  ) {}

  get index(): number {
    return this.plan.index;
  }

  /** Slots for the aggregates: what it loaded, else what it was asked for; a replica without slots counts one. */
  get slots(): number {
    return this.info?.sizes.slots ?? this.plan.engine.slots ?? 1;
  }

  get routable(): boolean {
    return this.state === 'ready' && this.supervisor.client !== undefined;
  }

  noteTimings(done: GenerateDone): void {
    const { prefillMs, decodeMs, prefillTokens } = done.timings;
    const mix = (old: number | null, sample: number): number => (old === null ? sample : old + EWMA * (sample - old));
    if (prefillTokens >= MIN_RATE_SAMPLE_TOKENS && prefillMs > 0) this.prefillTokensPerMs = mix(this.prefillTokensPerMs, prefillTokens / prefillMs);
    this.serviceMs = mix(this.serviceMs, prefillMs + decodeMs);
  }
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  private readonly index = new ExactPrefixIndex();
  private readonly router: Router;
  private readonly heal: HealPolicy;
  private closing = false;
  private rebuilding = false;
  /** Requests waiting because every replica that could serve them is in maintenance. */
  private readonly maintenanceWaiters = new Set<() => void>();
  private readonly readyListeners = new Set<(ready: number) => void>();
  /** The replica that last served each conversation id (insertion order = age). */
  private readonly conversationReplica = new Map<string, number>();

  constructor(private readonly options: ReplicaSetOptions) {
    this.heal = { ...DEFAULT_HEAL_POLICY, ...options.heal };
    this.router = new Router(this.index, options.routing ?? 'prefix');
    this.replicas = options.plans.map((plan) => {
      const supervisor = new EngineSupervisor({
        replica: plan.index,
        spawn: options.spawn,
        env: plan.env,
        load: { modelPath: options.modelPath, ...plan.engine, ...(options.testOnlyEngineFaults ? { testOnlyFaults: options.testOnlyEngineFaults } : {}) },
        log: options.log,
        logFile: plan.logFile,
        ...options.watchdog,
        ...(options.stopGraceMs !== undefined ? { stopGraceMs: options.stopGraceMs } : {}),
        pinCpus: (pid) => this.pinReplica(replica, pid),
      });
      const replica: Replica = new Replica(plan, supervisor);
      supervisor.on('ready', (info) => {
        replica.info = info;
        replica.lastReadyAt = Date.now();
        replica.latchReason = null;
        this.setState(replica, 'ready');
        const ready = this.replicas.filter((r) => r.state === 'ready').length;
        for (const listener of this.readyListeners) listener(ready);
      });
      supervisor.on('exit', (reason) => this.onReplicaExit(replica, reason));
      return replica;
    });
  }

  /** The replica set a run config describes on this machine (plans, routing policy, heal policy). */
  static fromConfig(
    config: RunConfig,
    machine: MachineFacts,
    options: Pick<ReplicaSetOptions, 'spawn' | 'log'> & Partial<ReplicaSetOptions>,
  ): ReplicaSet {
    return new ReplicaSet({
      plans: planReplicas(config, machine),
      modelPath: config.model,
      ...(config.routing ? { routing: config.routing } : {}),
      ...(config.pinCores !== undefined ? { pinCores: config.pinCores } : {}),
      ...options,
      heal: { ...config.heal, ...options.heal },
    });
  }

  /** Called with the count of ready replicas each time one becomes ready (the loader's progress). */
  onReady(listener: (ready: number) => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  /** Every replica's plan (cards, env, engine options). */
  get plans(): readonly ReplicaPlan[] {
    return this.options.plans;
  }

  /** Where every later start, heal and weights rebuild loads the model from (the arena, once it is filled). */
  loadModelFrom(modelPath: string): void {
    for (const replica of this.replicas) replica.supervisor.updateLoad({ modelPath });
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
    const topology = await readCpuTopology(this.options.cpuTopologyRoot);
    const partition = 'cores' in topology ? partitionCores(topology.cores, this.replicas.length) : { reason: topology.unreadable };
    if ('reason' in partition) {
      this.options.log(`CPU pinning: off (${partition.reason})`);
      return;
    }
    for (const [i, replica] of this.replicas.entries()) replica.cpus = partition.sets[i]!;
    this.options.log(`CPU pinning: ${this.replicas.map((r) => `replica ${r.index} → CPUs ${r.cpus.join(',')}`).join('; ')}`);
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
    return replica.supervisor.start();
  }

  /** Sets a replica's state; requests waiting out a maintenance look again whenever one changes. */
  private setState(replica: Replica, state: ReplicaState): void {
    replica.state = state;
    for (const wake of this.maintenanceWaiters) wake();
    this.maintenanceWaiters.clear();
  }

  private onReplicaExit(replica: Replica, reason: ExitReason): void {
    this.index.forgetReplica(replica.index);
    replica.info = null;
    if (this.closing || reason.kind === 'stopped') {
      this.setState(replica, 'stopped');
      return;
    }
    const stayedUp = replica.lastReadyAt >= replica.lastStartAt && Date.now() - replica.lastReadyAt >= this.heal.cooldownMs;
    replica.consecutiveFailures = stayedUp ? 1 : replica.consecutiveFailures + 1;
    if (replica.consecutiveFailures >= this.heal.maxConsecutiveFailures) {
      this.setState(replica, 'failed');
      this.options.log(`[replica ${replica.index}] failed ${replica.consecutiveFailures} times in a row; not restarting until asked`, 'error');
      return;
    }
    // The first failure after a stable run heals at once; a crash loop waits a cooldown, doubling each time.
    const wait = replica.lastStartAt + this.heal.cooldownMs * 2 ** (replica.consecutiveFailures - 1) - Date.now();
    const delay = stayedUp ? 0 : Math.max(0, wait);
    this.setState(replica, 'healing');
    this.options.log(`[replica ${replica.index}] healing in ${delay} ms (failure ${replica.consecutiveFailures} of ${this.heal.maxConsecutiveFailures})`, 'warn');
    replica.healTimer = setTimeout(() => {
      replica.healTimer = undefined;
      if (this.closing) return;
      this.startReplica(replica).catch(() => {
        // Logged by the supervisor; its exit event schedules the next attempt.
      });
    }, delay);
  }

  /** Starts a `failed`, `latched` (or stopped) replica again at the user's request, clearing its failure count. */
  async restartReplica(index: number): Promise<ReadyInfo> {
    const replica = this.replica(index);
    clearTimeout(replica.healTimer);
    replica.consecutiveFailures = 0;
    if (replica.supervisor.state === 'ready') await replica.supervisor.stop();
    return this.startReplica(replica);
  }

  /** Routes and runs one generation; transparently retried elsewhere if its engine dies before the first token. */
  async generate(request: GenerateRequestInput, options: ReplicaGenerateOptions = {}): Promise<ReplicaGenerateResult> {
    const blocks = blockHashes(request.tokens);
    const failedOver: number[] = [];
    for (;;) {
      const candidates: RouteCandidate[] = this.replicas
        .filter((r) => r.routable && !failedOver.includes(r.index))
        .map((r) => ({
          replica: r.index,
          running: r.running,
          slots: r.slots,
          prefillTokensPerMs: r.prefillTokensPerMs,
          serviceMs: r.serviceMs,
          servedConversation: request.conversationId !== undefined && this.conversationReplica.get(request.conversationId) === r.index,
        }));
      const decision = this.router.route(blocks, request.tokens.length, candidates);
      if (!decision && this.replicas.some((r) => r.state === 'maintenance')) {
        await this.maintenanceEnded(options.signal);
        continue;
      }
      if (!decision) {
        throw new NoReplicaError(
          failedOver.length ? `replicas ${failedOver.join(', ')} died before answering and no other replica is alive` : 'no replica is alive to serve the request',
        );
      }
      const replica = this.replica(decision.replica);
      try {
        return { ...(await this.runOn(replica, request, blocks, options)), failedOver };
      } catch (error) {
        if (error instanceof EngineExitedError && !options.signal?.aborted) {
          failedOver.push(replica.index);
          this.options.log(`[replica ${replica.index}] died before the first token; sending the request to another replica`, 'warn');
          continue;
        }
        throw error;
      }
    }
  }

  private async runOn(replica: Replica, request: GenerateRequestInput, blocks: readonly number[], options: ReplicaGenerateOptions) {
    const client = replica.supervisor.client;
    if (!client) throw new EngineExitedError({ code: null, signal: null });
    replica.running++;
    let tokensSent = 0;
    const handle = client.generate(request, (chunk) => {
      tokensSent += chunk.tokens.length;
      options.onTokens?.({ ...chunk, replica: replica.index });
    });
    const abort = (): void => void handle.cancel().catch(() => {});
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) abort();
    // The slot keeps only the blocks it shares with this prompt; the rest is gone from the engine now.
    void handle.started.then(
      (s) => this.index.truncateSlot(replica.index, s.slot, Math.floor(s.reusedTokens / BLOCK_TOKENS)),
      () => {},
    );
    try {
      const done = await handle.done;
      if (done.slot !== null) {
        const held = [...request.tokens, ...done.completionTokens].slice(0, done.heldTokens);
        const heldBlocks = held.length >= request.tokens.length ? blockHashes(held) : blocks.slice(0, Math.floor(held.length / BLOCK_TOKENS));
        this.index.setSlot(replica.index, done.slot, heldBlocks);
      }
      if (request.conversationId !== undefined) this.noteConversation(request.conversationId, replica.index);
      replica.cacheHitTokens += done.reusedTokens;
      replica.promptTokens += done.usage.promptTokens;
      replica.completionTokens += done.usage.completionTokens;
      replica.noteTimings(done);
      return { ...done, replica: replica.index, globalSlot: done.slot === null ? null : this.slotOffset(replica.index) + done.slot };
    } catch (error) {
      if (error instanceof EngineExitedError && tokensSent > 0) throw new ReplicaDiedError(replica.index, tokensSent);
      throw error;
    } finally {
      replica.running--;
      options.signal?.removeEventListener('abort', abort);
    }
  }

  private noteConversation(id: string, replica: number): void {
    this.conversationReplica.delete(id);
    this.conversationReplica.set(id, replica);
    if (this.conversationReplica.size > CONVERSATIONS_REMEMBERED) this.conversationReplica.delete(this.conversationReplica.keys().next().value!);
  }

  /** Resolves when some replica's state changes (a maintenance ended); rejects when `signal` aborts first. */
  private maintenanceEnded(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new NoReplicaError('the request was cancelled while it waited for a replica in maintenance'));
      const wake = (): void => {
        signal?.removeEventListener('abort', abort);
        resolve();
      };
      const abort = (): void => {
        this.maintenanceWaiters.delete(wake);
        reject(new NoReplicaError('the request was cancelled while it waited for a replica in maintenance'));
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.maintenanceWaiters.add(wake);
    });
  }

  /** The pre-check of a rebuild for one replica or all; touches nothing. */
  async precheck(request: PrecheckRequest): Promise<ReplicaVerdict[]> {
    return Promise.all(
      this.rebuildScope(request.replica).map(async (replica): Promise<ReplicaVerdict> => {
        const engine = this.rebuildTarget(replica, request.change).engine;
        if ('unavailable' in engine) return { replica: replica.index, fits: false, reason: engine.unavailable };
        return engine.client.precheck(request.change).then(
          (verdict) => ({ replica: replica.index, ...verdict }),
          (error: unknown) => ({ replica: replica.index, fits: false, reason: (error as Error).message }),
        );
      }),
    );
  }

  /** A live resize of one replica, or a rolling one of all (DESIGN §5); one rebuild at a time. */
  async rebuild(request: RebuildRequest, onProgress: OnRebuildProgress = () => {}): Promise<ReplicaRebuildOutcome[]> {
    if (this.rebuilding) throw new RebuildInProgressError();
    this.rebuilding = true;
    try {
      const targets = this.rebuildScope(request.replica).map((replica) => this.rebuildTarget(replica, request.change));
      return await rollingRebuild(targets, request, onProgress);
    } finally {
      this.rebuilding = false;
    }
  }

  private rebuildScope(which: number | 'all'): Replica[] {
    return which === 'all' ? this.replicas : [this.replica(which)];
  }

  private rebuildTarget(replica: Replica, change: RebuildChange): RebuildTarget {
    return {
      index: replica.index,
      get engine() {
        const client = replica.routable ? replica.supervisor.client : undefined;
        if (!client || !replica.info) return { unavailable: `replica ${replica.index} is ${replica.state}, not ready` };
        // gpuLayers as asked for (`auto` stays `auto`), so a rollback restores the request, not its resolution.
        return { client, sizes: { ...poolSizesOf(replica.info.sizes), gpuLayers: replica.supervisor.loadOptions.gpuLayers ?? 'auto' } };
      },
      enterMaintenance: () => this.setState(replica, 'maintenance'),
      settle: (outcome, info) => this.settleRebuild(replica, change, outcome, info),
    };
  }

  private settleRebuild(replica: Replica, change: RebuildChange, outcome: RebuildOutcome, info: ReadyInfo | null): void {
    if (!replica.supervisor.client) return; // the engine exited: its exit already set the state and heals it
    if (info) replica.info = info;
    switch (outcome.outcome) {
      case 'Applied':
        replica.supervisor.updateLoad(change);
        this.remapIndex(replica, outcome.prefixes);
        break;
      case 'RolledBack':
        this.remapIndex(replica, outcome.prefixes);
        break;
      case 'Latched':
        this.index.forgetReplica(replica.index);
        replica.latchReason = `rebuild failed (${outcome.reason}) and so did its rollback (${outcome.rollback_error}); restart the replica`;
        this.options.log(`[replica ${replica.index}] latched: ${replica.latchReason}`, 'error');
        this.setState(replica, 'latched');
        return;
      case 'RejectedIntact':
        break;
    }
    this.setState(replica, 'ready');
  }

  private remapIndex(replica: Replica, prefixes: PrefixReport): void {
    const moves = prefixes.slots.flatMap((p) => (p.to === null ? [] : [{ from: p.from, to: p.to, keepBlocks: Math.floor(p.tokens / BLOCK_TOKENS) }]));
    this.index.remapSlots(replica.index, moves);
  }

  private replica(index: number): Replica {
    const replica = this.replicas[index];
    if (!replica) throw new RangeError(`no replica ${index} (there are ${this.replicas.length})`);
    return replica;
  }

  private slotOffset(index: number): number {
    return this.replicas.slice(0, index).reduce((sum, r) => sum + r.slots, 0);
  }

  /** Prompt tokens of `tokens` the index says `replica` holds, in whole blocks (what the router sees). */
  heldPrefixTokens(replica: number, tokens: readonly number[]): number {
    return this.index.matchedBlocks(replica, blockHashes(tokens)) * BLOCK_TOKENS;
  }

  setRoutingPolicy(policy: RoutingPolicy): void {
    this.router.setPolicy(policy);
  }

  get routingPolicy(): RoutingPolicy {
    return this.router.currentPolicy;
  }

  /** What replica `index`'s engine reported when it last loaded or rebuilt (null while it has none). */
  readyInfo(index: number): ReadyInfo | null {
    return this.replica(index).info;
  }

  /** The supervisor of replica `index` (for tests and the dashboard's per-replica actions). */
  supervisorOf(index: number): EngineSupervisor {
    return this.replica(index).supervisor;
  }

  get size(): number {
    return this.replicas.length;
  }

  get totalSlots(): number {
    return this.replicas.reduce((sum, r) => sum + r.slots, 0);
  }

  /** Requests waiting for a slot, summed over replicas. */
  get waiting(): number {
    return this.replicas.reduce((sum, r) => sum + Math.max(0, r.running - r.slots), 0);
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

  replicaView(): ReplicaView[] {
    return this.replicas.map((r) => ({
      replica: r.index,
      alive: r.routable,
      running: r.running,
      routed: this.router.routedCount(r.index),
      slots: r.slots,
      state: r.state,
      latchReason: r.latchReason,
      gpus: [...r.plan.gpus],
      cpus: [...r.cpus],
      cacheHitTokens: r.cacheHitTokens,
      promptTokens: r.promptTokens,
      completionTokens: r.completionTokens,
      pid: r.supervisor.pid ?? null,
    }));
  }

  /** Every living replica's slots, numbered globally, each with its replica. */
  async slotsView(): Promise<GlobalSlotView[]> {
    const perReplica = await Promise.all(
      this.replicas.map(async (r) => {
        const client = r.routable || r.state === 'maintenance' ? r.supervisor.client : undefined;
        const slots = client ? await client.slots().catch(() => []) : [];
        const offset = this.slotOffset(r.index);
        return slots.map((s) => ({ ...s, replica: r.index, replicaSlot: s.slot, slot: offset + s.slot }));
      }),
    );
    return perReplica.flat();
  }

  /** Stops every replica (unload); healing stops too. */
  async close(): Promise<void> {
    this.closing = true;
    for (const r of this.replicas) clearTimeout(r.healTimer);
    await Promise.all(this.replicas.map((r) => r.supervisor.stop()));
    for (const r of this.replicas) this.setState(r, 'stopped');
    await Promise.all(this.replicas.map((r) => r.supervisor.close()));
  }
}
