/**
 * The workstation: core put together around one loaded model — the shared arena, the tokenizer, the
 * replica set — plus what outlives a model: the GPU monitor, the throughput meter, the request metrics
 * (its prom-client registry), the log and the listeners. A model is loaded from a run config at start or
 * later from the UI's loader. Either way it is validated first (workstation/model-start.ts) and only a model
 * that passes replaces the one serving (which keeps serving otherwise). Without a model, the views are empty and requests get a clear 503. The HTTP front,
 * the control API and the Electron shell all drive this one object; nothing in it knows which is in front.
 */
import { basename, join } from 'node:path';
import { HISTORY_SECONDS, type ArenaStatus, type EventPayload, type GpuReport, type HistorySample, type LoadStep } from '../common/contract.js';
import type { GenerateRequestInput } from '../common/engine-protocol.js';
import type { RebuildProgress, RebuildRequest, ReplicaRebuildOutcome } from '../common/rebuild.js';
import type { ArenaFacts } from './arena/arena-plan.js';
import type { ChatBackend } from './chat/chat-backend.js';
import { ChatService } from './chat/chat-service.js';
import { ConversationStore } from './chat/conversation-store.js';
import { ModelDownloads } from './models/model-downloads.js';
import { ModelLibrary } from './models/model-library.js';
import type { MachineFacts, RoutingPolicy, RunConfig } from './config/run-config.js';
import type { SpawnEngine, SpawnTokenizer } from './engine/engine-process.js';
import { GpuMonitor } from './gpu/gpu-report.js';
import { CoreLog, type LogSink } from './logging/core-log.js';
import { RequestMetrics } from './metrics/request-metrics.js';
import type { LogRotation } from './logging/log-file.js';
import { NoReplicaError } from './replicas/replica-errors.js';
import { ReplicaSet, type ReplicaSetOptions } from './replicas/replica-set.js';
import type { ReplicaGenerateOptions, ReplicaGenerateResult } from './replicas/request-dispatcher.js';
import { SampleSeries } from './sample-series.js';
import { ThroughputMeter } from './throughput-meter.js';
import { Tokenizer, type TokenizerOptions } from './tokenizer.js';
import { startModel, validateModel, type BringUp, type LoadedModel, type ValidatedModel } from './workstation/model-start.js';

export type WorkstationStatus = 'idle' | 'loading' | 'ok' | 'degraded' | 'error';

export interface WorkstationOptions {
  /** The model to load at start; none: the workstation starts empty and the loader loads one. */
  config?: RunConfig | null;
  machine: MachineFacts;
  spawn: SpawnEngine;
  /** Starts a model's tokenizer child (fork under Node, utilityProcess in Electron). */
  spawnTokenizer: SpawnTokenizer;
  /** Tokenizer-process settings beyond the defaults (tests shorten the validation timeout and the hang check). */
  tokenizerOptions?: Omit<TokenizerOptions, 'spawn' | 'log' | 'probeWeights'>;
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
  /** The folder the loader lists GGUF files from and downloads go to; default `<dataDir>/models`, null for none. */
  modelsDir?: string | null;
}

/** Implements the chat's backend: chat/ sees the workstation only through that interface. */
export class Workstation implements ChatBackend {
  readonly throughput = new ThroughputMeter();
  /** A sample a second, the last HISTORY_SECONDS: the dashboard's charts backfilled on connect (`getHistory`). */
  readonly history = new SampleSeries<HistorySample>(() => {
    const views = this.replicas.replicaView();
    return { ...this.throughputSample(views), routed: views.map((r) => r.routed) };
  }, HISTORY_SECONDS);
  /** Per workstation, not prom-client's global registry: one process may hold several (tests). */
  readonly requestMetrics = new RequestMetrics();
  readonly gpus: GpuMonitor;
  readonly chat: ChatService;
  readonly models: ModelLibrary;
  readonly downloads: ModelDownloads;
  readonly log: CoreLog;
  private loaded: LoadedModel;
  /** A load is under way (validating, or replacing the model). */
  private busy = false;
  /** The model is being replaced: the old one is gone, the new one not ready. */
  private loading = false;
  private readonly rebuildListeners = new Set<(progress: RebuildProgress) => void>();
  private readonly loadListeners = new Set<(step: LoadStep) => void>();
  /** What bringing a model up needs of the workstation (workstation/model-start.ts). */
  private readonly bringUp: BringUp;

  constructor(private readonly options: WorkstationOptions) {
    const logFile = options.logFile === undefined ? join(options.dataDir, 'logs', 'manifold.log') : options.logFile;
    this.log = new CoreLog({ file: logFile, ...(options.logRotation ? { rotation: options.logRotation } : {}), ...(options.log ? { echo: options.log } : {}) });
    this.log.info(`manifold started (pid ${process.pid})${logFile ? `, logging to ${logFile}` : ''}`);
    this.gpus = options.gpuMonitor ?? new GpuMonitor();
    this.chat = new ChatService(new ConversationStore(options.dataDir, (line) => this.log.warn(line)), this);
    const modelsDir = options.modelsDir === undefined ? join(options.dataDir, 'models') : options.modelsDir;
    this.models = new ModelLibrary(options.dataDir, modelsDir);
    this.downloads = new ModelDownloads({ modelsDir, log: (level, line) => this.log[level](line) });
    this.loaded = this.prepare(options.config ?? null);
    this.bringUp = {
      log: this.log,
      step: (step) => this.step(step),
      spawnTokenizer: options.spawnTokenizer,
      ...(options.tokenizerOptions ? { tokenizerOptions: options.tokenizerOptions } : {}),
      ...(options.arenaFacts ? { arenaFacts: options.arenaFacts } : {}),
      noteLoaded: (modelPath) => this.models.noteLoaded(modelPath),
    };
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
    const replicas = ReplicaSet.fromConfig(config, this.options.machine, {
      spawn: this.options.spawn,
      log,
      dispatchObserver: this.requestMetrics,
      prefixCacheDir: join(this.options.dataDir, 'prefix-cache'),
      ...this.options.replicaOptions,
    });
    this.requestMetrics.zeroSeries(replicas.replicaView().map((r) => r.replica));
    return {
      config,
      modelId: basename(config.model).replace(/\.gguf$/i, ''),
      replicas,
      arena: undefined,
      tokenizer: undefined,
      started: false,
    };
  }

  /** Validates and loads the model of the config given at construction (nothing when there was none). */
  async start(): Promise<void> {
    if (!this.options.config) return;
    this.busy = true;
    this.loading = true;
    try {
      await startModel(this.loaded, await validateModel(this.loaded.config.model, this.bringUp), this.bringUp);
    } catch (error) {
      this.log.error(`start failed: ${(error as Error).message}`);
      throw error;
    } finally {
      this.busy = false;
      this.loading = false;
    }
  }

  /**
   * Validates `config`'s model, and only when it passes unloads the current model and loads the new one;
   * each step is sent to load listeners. A model that fails validation leaves the current one serving.
   */
  async load(config: RunConfig): Promise<void> {
    if (this.busy) throw new Error('a model is already loading; wait for it');
    this.busy = true;
    try {
      let next: LoadedModel;
      let validated: ValidatedModel;
      try {
        next = this.prepare(config);
        validated = await validateModel(config.model, this.bringUp);
      } catch (error) {
        const keeps = this.loaded.started ? `; ${this.loaded.modelId} keeps serving` : '';
        this.log.error(`loading ${config.model} failed: ${(error as Error).message}${keeps}`);
        this.step({ step: 'failed', detail: `${(error as Error).message}${keeps}`, fraction: null });
        throw error;
      }
      this.loading = true;
      try {
        await this.unload();
        this.loaded = next;
        await startModel(next, validated, this.bringUp);
      } catch (error) {
        this.log.error(`loading ${config.model} failed: ${(error as Error).message}`);
        await validated.tokenizer.dispose(); // (a second dispose by unload is a no-op)
        await this.unload();
        this.step({ step: 'failed', detail: (error as Error).message, fraction: null });
        throw error;
      }
    } finally {
      this.busy = false;
      this.loading = false;
    }
  }

  /** Stops the current model's replicas and releases its tokenizer and arena; the workstation is empty after. */
  async unload(): Promise<void> {
    const { replicas, tokenizer, arena } = this.loaded;
    await replicas.close();
    await tokenizer?.dispose();
    arena?.close();
    this.loaded = this.prepare(null);
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

  /** The run config's aliases of the loaded model (llama-server's `--alias`); none when no model is loaded. */
  get modelAliases(): readonly string[] {
    return this.loaded.config.alias ?? [];
  }

  /** The loaded model's path as configured; null when none is loaded. */
  get modelPath(): string | null {
    return this.loaded.config.model || null;
  }

  /** The model's vocabulary size as its replicas report it; 0 while none is ready to say. */
  get vocabularySize(): number {
    return this.replicas.info().model?.vocabSize ?? 0;
  }

  /** Whether the loaded model's template thinks (false with no model). */
  get thinks(): boolean {
    return (this.loaded.tokenizer?.thinking ?? null) !== null;
  }

  get tokenizer(): Tokenizer {
    if (!this.loaded.tokenizer) throw new NoReplicaError(this.loading ? 'the model is still loading' : 'no model is loaded; load one on the Models page');
    return this.loaded.tokenizer;
  }

  arenaStatus(): ArenaStatus {
    return (
      this.loaded.arena?.status() ?? {
        state: 'off',
        kind: null,
        reason: 'no model is loaded',
        modelBytes: 0,
        filledBytes: 0,
        sha256: null,
        enginePath: null,
        warning: null,
        fillMs: null,
      }
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
    const reasons = views
      .filter((r) => r.state !== 'ready')
      .map((r) => `replica ${r.replica} is ${r.state === 'maintenance' ? 'in maintenance (a rebuild)' : r.state}`);
    // A replica in maintenance comes back by itself, and requests wait for it meanwhile: not an error.
    if (!views.some((r) => r.alive || r.state === 'maintenance')) return { status: 'error', reasons: reasons.length ? reasons : ['no replica is alive'] };
    return { status: reasons.length ? 'degraded' : 'ok', reasons };
  }

  /**
   * Runs one generation through the router, counting its tokens for the throughput figures and timing it
   * for the request metrics; the tokenizer remembers the answer's sampled ids for the conversation's next turn.
   */
  async generate(request: GenerateRequestInput, options: ReplicaGenerateOptions = {}): Promise<ReplicaGenerateResult> {
    const timer = this.requestMetrics.startRequest();
    const result = await this.replicas.generate(request, {
      ...options,
      onTokens: (chunk) => {
        timer.tokens(chunk);
        this.throughput.record(chunk.tokens.length);
        options.onTokens?.(chunk);
      },
    });
    timer.served(result);
    // Ids outside the model's vocabulary (a remote peer's answer) must not reach the tokenizer child's native detokenizer.
    const vocabulary = this.vocabularySize;
    if (result.completionTokens.every((token) => token < vocabulary)) this.loaded.tokenizer?.rememberAnswer(result.text, result.completionTokens);
    return result;
  }

  /** A live resize (DESIGN §5); each step is also sent to rebuild listeners (the dashboard's progress). */
  async rebuild(request: RebuildRequest): Promise<ReplicaRebuildOutcome[]> {
    const outcomes = await this.replicas.rebuild(request, (progress) => {
      for (const listener of this.rebuildListeners) listener(progress);
    });
    for (const o of outcomes)
      this.log.write(o.outcome === 'Applied' ? 'info' : 'warn', `rebuild of replica ${o.replica}: ${o.outcome}${'reason' in o ? ` (${o.reason})` : ''}`);
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

  /** `views`: the replicas' views when the caller has just built them (the history sample reads them too). */
  throughputSample(views = this.replicas.replicaView()): EventPayload<'throughput'> {
    const stats = this.replicas.queueStats;
    const waits = stats.summary();
    return {
      at: Date.now(),
      tokensPerSecond: this.throughput.lastSecond(),
      running: views.reduce((sum, r) => sum + r.running, 0),
      waiting: this.replicas.waiting,
      queue: { rejected: stats.rejectedTotal, waitP50Ms: waits.p50Ms, waitP90Ms: waits.p90Ms, waitP99Ms: waits.p99Ms },
    };
  }

  /** Unloads the model, releases NVML, then closes the log file. */
  async close(): Promise<void> {
    this.downloads.cancelAll();
    this.history.close();
    await this.unload();
    this.gpus.close();
    await this.log.close();
  }
}
