/**
 * The workstation: core put together around one loaded model — the shared arena, the tokenizer, the
 * replica set — plus what outlives a model: the GPU monitor, the throughput meter, the log and
 * the listeners. A model is loaded from a run config at start or later from the UI's loader (the old one
 * is unloaded first); without one, the views are empty and requests get a clear 503. The HTTP front, the
 * control API and the Electron shell all drive this one object; nothing in it knows which is in front.
 */
import { basename, join } from 'node:path';
import type { ArenaStatus, EventPayload, GpuReport, LoadStep } from '../../common/contract.js';
import type { GenerateRequestInput } from '../../common/engine-protocol.js';
import { readGgufFileHeader } from '../../common/node/gguf-file.js';
import type { RebuildProgress, RebuildRequest, ReplicaRebuildOutcome } from '../../common/rebuild.js';
import type { ArenaFacts } from './arena/arena-plan.js';
import { enginePrivateBytes } from './arena/engine-memory.js';
import { ArenaError } from './arena/model-arena.js';
import type { ChatBackend } from './chat/chat-backend.js';
import { ChatService } from './chat/chat-service.js';
import { ConversationStore } from './chat/conversation-store.js';
import { ModelLibrary } from './models/model-library.js';
import { SharedArena } from './arena/shared-arena.js';
import type { MachineFacts, RoutingPolicy, RunConfig } from './config/run-config.js';
import type { SpawnEngine } from './engine/engine-process.js';
import { GpuMonitor } from './gpu/gpu-report.js';
import { CoreLog, type LogSink } from './logging/core-log.js';
import type { LogRotation } from './logging/log-file.js';
import { NoReplicaError } from './replicas/replica-errors.js';
import { ReplicaSet, type ReplicaSetOptions } from './replicas/replica-set.js';
import type { ReplicaGenerateOptions, ReplicaGenerateResult } from './replicas/request-dispatcher.js';
import { ThroughputMeter } from './throughput-meter.js';
import { Tokenizer } from './tokenizer.js';

export type WorkstationStatus = 'idle' | 'loading' | 'ok' | 'degraded' | 'error';

export interface WorkstationOptions {
  /** The model to load at start; none: the workstation starts empty and the loader loads one. */
  config?: RunConfig | null;
  machine: MachineFacts;
  spawn: SpawnEngine;
  /** Also hand log lines here (the serve CLI prints them to stderr). */
  log?: LogSink;
  /** The rotating log file; default `<dataDir>/logs/manifold.log`, null for none. */
  logFile?: string | null;
  logRotation?: LogRotation;
  /** Replica-set settings beyond the config (tests shorten the watchdog and heal times). */
  replicaOptions?: Partial<ReplicaSetOptions>;
  /** NVML's reader (the serve CLI's, which also found the cards); one of its own otherwise. */
  gpuMonitor?: GpuMonitor;
  /** Arena facts given instead of read off the machine (tests force the /dev/shm fallback). */
  arenaFacts?: Partial<ArenaFacts>;
  /** Where conversations and the recent-models list are kept. */
  dataDir: string;
  /** The folder the loader lists GGUF files from; none: only recent models and typed paths. */
  modelsDir?: string | null;
}

/** Everything that belongs to one loaded model. */
interface LoadedModel {
  config: RunConfig;
  modelId: string;
  replicas: ReplicaSet;
  arena: SharedArena | undefined;
  tokenizer: Tokenizer | undefined;
  started: boolean;
}

/** Implements the chat's backend: chat/ sees the workstation only through that interface. */
export class Workstation implements ChatBackend {
  readonly throughput = new ThroughputMeter();
  readonly gpus: GpuMonitor;
  readonly chat: ChatService;
  readonly models: ModelLibrary;
  readonly log: CoreLog;
  private loaded: LoadedModel;
  private loading = false;
  private readonly rebuildListeners = new Set<(progress: RebuildProgress) => void>();
  private readonly loadListeners = new Set<(step: LoadStep) => void>();

  constructor(private readonly options: WorkstationOptions) {
    const logFile = options.logFile === undefined ? join(options.dataDir, 'logs', 'manifold.log') : options.logFile;
    this.log = new CoreLog({ file: logFile, ...(options.logRotation ? { rotation: options.logRotation } : {}), ...(options.log ? { echo: options.log } : {}) });
    this.log.info(`manifold started (pid ${process.pid})${logFile ? `, logging to ${logFile}` : ''}`);
    this.gpus = options.gpuMonitor ?? new GpuMonitor();
    this.chat = new ChatService(new ConversationStore(options.dataDir, (line) => this.log.warn(line)), this);
    this.models = new ModelLibrary(options.dataDir, options.modelsDir ?? null);
    this.loaded = this.prepare(options.config ?? null);
  }

  /** The parts of `config`'s model, not started; an empty set when there is no model. */
  private prepare(config: RunConfig | null): LoadedModel {
    const log = this.log.sink;
    if (!config) {
      return {
        config: { model: '' },
        modelId: '',
        replicas: new ReplicaSet({ plans: [], modelPath: '', spawn: this.options.spawn, log }),
        arena: undefined,
        tokenizer: undefined,
        started: false,
      };
    }
    return {
      config,
      modelId: basename(config.model).replace(/\.gguf$/i, ''),
      replicas: ReplicaSet.fromConfig(config, this.options.machine, { spawn: this.options.spawn, log, ...this.options.replicaOptions }),
      arena: undefined,
      tokenizer: undefined,
      started: false,
    };
  }

  /** Loads the model of the config given at construction (nothing when there was none). */
  async start(): Promise<void> {
    if (!this.options.config) return;
    this.loading = true;
    try {
      await this.startLoaded(this.loaded);
    } catch (error) {
      this.log.error(`start failed: ${(error as Error).message}`);
      throw error;
    } finally {
      this.loading = false;
    }
  }

  /** Unloads the current model (if any) and loads `config`'s; each step is sent to load listeners. */
  async load(config: RunConfig): Promise<void> {
    if (this.loading) throw new Error('a model is already loading; wait for it');
    this.loading = true;
    try {
      await this.unload();
      this.loaded = this.prepare(config);
      await this.startLoaded(this.loaded);
    } catch (error) {
      this.log.error(`loading ${config.model} failed: ${(error as Error).message}`);
      await this.unload();
      this.step({ step: 'failed', detail: (error as Error).message, fraction: null });
      throw error;
    } finally {
      this.loading = false;
    }
  }

  /** Fills the arena (when asked), opens the tokenizer and starts the replicas; rejects when the model or every replica fails. */
  private async startLoaded(loaded: LoadedModel): Promise<void> {
    const { config, replicas } = loaded;
    this.step({ step: 'arena', detail: config.shared_arena ? 'reading the model into the arena' : 'shared_arena is off', fraction: 0 });
    loaded.arena = await SharedArena.start({
      modelPath: config.model,
      requested: config.shared_arena === true,
      engines: replicas.size,
      enginePrivateBytes: config.shared_arena ? await this.enginePrivateBytes(loaded) : 0,
      log: this.log.sink,
      onProgress: (fraction) => this.step({ step: 'arena', detail: 'reading the model into the arena', fraction }),
      ...(this.options.arenaFacts ? { facts: this.options.arenaFacts } : {}),
    });
    replicas.loadModelFrom(loaded.arena.modelPath);
    this.step({ step: 'tokenizer', detail: 'opening the vocabulary and chat template', fraction: null });
    loaded.tokenizer = await Tokenizer.open(loaded.arena.modelPath);
    this.step({ step: 'replicas', detail: `starting ${replicas.size} replicas`, fraction: 0 });
    const offReady = replicas.onReady((ready) => this.step({ step: 'replicas', detail: `${ready} of ${replicas.size} replicas ready`, fraction: ready / replicas.size }));
    try {
      await replicas.start();
    } finally {
      offReady();
    }
    loaded.started = true;
    await this.models.noteLoaded(config.model).catch((error: Error) => this.log.warn(`recent models: not saved (${error.message})`));
    this.log.info(`workstation ready: ${replicas.info().replicas_alive}/${replicas.size} replicas of ${loaded.modelId}`);
    this.step({ step: 'ready', detail: `${replicas.info().replicas_alive}/${replicas.size} replicas of ${loaded.modelId}`, fraction: 1 });
  }

  /** Stops the current model's replicas and releases its tokenizer and arena; the workstation is empty after. */
  async unload(): Promise<void> {
    const { replicas, tokenizer, arena } = this.loaded;
    await replicas.close();
    await tokenizer?.dispose();
    arena?.close();
    this.loaded = this.prepare(null);
  }

  /** The largest private memory one engine's plan is estimated to take (the arena's RAM warning). */
  private async enginePrivateBytes(loaded: LoadedModel): Promise<number> {
    const model = loaded.config.model;
    const header = await readGgufFileHeader(model).catch((error: Error) => {
      throw new ArenaError(`cannot read ${model} into the arena: ${error.message}`);
    });
    const estimates = loaded.replicas.plans.map(({ engine }) =>
      enginePrivateBytes(header, { contextSize: engine.contextSize ?? 4096, slots: engine.slots ?? 1, kvType: engine.kvType ?? 'f16', gpuLayers: engine.gpuLayers ?? 'auto' }),
    );
    return Math.max(0, ...estimates);
  }

  private step(step: LoadStep): void {
    for (const listener of this.loadListeners) listener(step);
  }

  /** The loaded model's replica set (an empty one when no model is loaded). */
  get replicas(): ReplicaSet {
    return this.loaded.replicas;
  }

  /** The loaded model's id (its file name without `.gguf`); '' when none is loaded. */
  get modelId(): string {
    return this.loaded.modelId;
  }

  /** The loaded model's path as configured; null when none is loaded. */
  get modelPath(): string | null {
    return this.loaded.config.model || null;
  }

  get tokenizer(): Tokenizer {
    if (!this.loaded.tokenizer) throw new NoReplicaError(this.loading ? 'the model is still loading' : 'no model is loaded; load one from the dashboard’s loader');
    return this.loaded.tokenizer;
  }

  arenaStatus(): ArenaStatus {
    return (
      this.loaded.arena?.status() ?? { state: 'off', kind: null, reason: 'no model is loaded', modelBytes: 0, filledBytes: 0, sha256: null, enginePath: null, warning: null, fillMs: null }
    );
  }

  /** GPU figures now: NVML's cards with the replicas using them, else the engines' VRAM state, else none. */
  gpuReport(): GpuReport {
    return this.gpus.report(this.replicas.engineGpuStates());
  }

  get routingPolicy(): RoutingPolicy {
    return this.replicas.routingPolicy;
  }

  setRoutingPolicy(policy: RoutingPolicy): void {
    this.replicas.setRoutingPolicy(policy);
  }

  status(): { status: WorkstationStatus; reasons: string[] } {
    if (this.loading) return { status: 'loading', reasons: ['the model is loading'] };
    if (!this.loaded.started) return { status: 'idle', reasons: ['no model is loaded'] };
    const views = this.replicas.replicaView();
    const reasons = views.filter((r) => r.state !== 'ready').map((r) => `replica ${r.replica} is ${r.state === 'maintenance' ? 'in maintenance (a rebuild)' : r.state}`);
    // A replica in maintenance comes back by itself, and requests wait for it meanwhile: not an error.
    if (!views.some((r) => r.alive || r.state === 'maintenance')) return { status: 'error', reasons: reasons.length ? reasons : ['no replica is alive'] };
    return { status: reasons.length ? 'degraded' : 'ok', reasons };
  }

  /** Runs one generation through the router, counting its tokens for the throughput figures. */
  generate(request: GenerateRequestInput, options: ReplicaGenerateOptions = {}): Promise<ReplicaGenerateResult> {
    return this.replicas.generate(request, {
      ...options,
      onTokens: (chunk) => {
        this.throughput.record(chunk.tokens.length);
        options.onTokens?.(chunk);
      },
    });
  }

  /** A live resize (DESIGN §5); each step is also sent to rebuild listeners (the dashboard's progress). */
  async rebuild(request: RebuildRequest): Promise<ReplicaRebuildOutcome[]> {
    const outcomes = await this.replicas.rebuild(request, (progress) => {
      for (const listener of this.rebuildListeners) listener(progress);
    });
    for (const o of outcomes) this.log.write(o.outcome === 'Applied' ? 'info' : 'warn', `rebuild of replica ${o.replica}: ${o.outcome}${'reason' in o ? ` (${o.reason})` : ''}`);
    return outcomes;
  }

  onRebuildProgress(listener: (progress: RebuildProgress) => void): () => void {
    this.rebuildListeners.add(listener);
    return () => this.rebuildListeners.delete(listener);
  }

  onLoadStep(listener: (step: LoadStep) => void): () => void {
    this.loadListeners.add(listener);
    return () => this.loadListeners.delete(listener);
  }

  throughputSample(): EventPayload<'throughput'> {
    const views = this.replicas.replicaView();
    const stats = this.replicas.queueStats;
    const waits = stats.summary();
    return {
      at: Date.now(),
      tokensPerSecond: this.throughput.tokensPerSecond(),
      running: views.reduce((sum, r) => sum + r.running, 0),
      waiting: this.replicas.waiting,
      queue: { rejected: stats.rejectedTotal, waitP50Ms: waits.p50Ms, waitP90Ms: waits.p90Ms, waitP99Ms: waits.p99Ms },
    };
  }

  /** Unloads the model, releases NVML, then closes the log file. */
  async close(): Promise<void> {
    await this.unload();
    this.gpus.close();
    await this.log.close();
  }
}
