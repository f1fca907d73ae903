/**
 * The workstation: core put together for one run config — the shared arena, the tokenizer, the replica
 * set, the GPU monitor, the throughput meter and the log buffer. The HTTP front, the control API and the Electron shell all drive
 * this one object; nothing in it knows which of them is in front.
 */
import { basename } from 'node:path';
import type { GenerateRequestInput } from '../../common/engine-protocol.js';
import type { ArenaStatus, EventPayload, GpuReport } from '../../common/contract.js';
import { readGgufFileHeader } from '../../common/node/gguf-file.js';
import type { RebuildProgress, RebuildRequest, ReplicaRebuildOutcome } from '../../common/rebuild.js';
import type { ArenaFacts } from './arena/arena-plan.js';
import { enginePrivateBytes } from './arena/engine-memory.js';
import { ArenaError } from './arena/model-arena.js';
import { SharedArena } from './arena/shared-arena.js';
import type { MachineFacts, RoutingPolicy, RunConfig } from './config/run-config.js';
import { GpuMonitor } from './gpu/gpu-report.js';
import type { SpawnEngine } from './engine/engine-process.js';
import { ReplicaSet, type ReplicaGenerateOptions, type ReplicaGenerateResult, type ReplicaSetOptions } from './replicas/replica-set.js';
import { ThroughputMeter } from './throughput-meter.js';
import { Tokenizer } from './tokenizer.js';

export type WorkstationStatus = 'loading' | 'ok' | 'degraded' | 'error';

export interface WorkstationOptions {
  config: RunConfig;
  machine: MachineFacts;
  spawn: SpawnEngine;
  /** Also print log lines here (the serve CLI prints to stderr). */
  log?: (line: string) => void;
  /** Replica-set settings beyond the config (tests shorten the watchdog and heal times). */
  replicaOptions?: Partial<ReplicaSetOptions>;
  /** NVML's reader (the serve CLI's, which also found the cards); one of its own otherwise. */
  gpuMonitor?: GpuMonitor;
  /** Arena facts given instead of read off the machine (tests force the /dev/shm fallback). */
  arenaFacts?: Partial<ArenaFacts>;
}

const LOG_LINES_KEPT = 500;

export class Workstation {
  readonly replicas: ReplicaSet;
  readonly modelId: string;
  readonly throughput = new ThroughputMeter();
  readonly gpus: GpuMonitor;
  private tokenizerValue: Tokenizer | undefined;
  private arena: SharedArena | undefined;
  private started = false;
  private readonly logLines: string[] = [];
  private readonly logListeners = new Set<(line: string) => void>();
  private readonly rebuildListeners = new Set<(progress: RebuildProgress) => void>();

  constructor(private readonly options: WorkstationOptions) {
    this.modelId = basename(options.config.model).replace(/\.gguf$/i, '');
    this.gpus = options.gpuMonitor ?? new GpuMonitor();
    this.replicas = ReplicaSet.fromConfig(options.config, options.machine, {
      spawn: options.spawn,
      log: (line) => this.log(line),
      ...options.replicaOptions,
    });
  }

  /** Fills the arena (when asked), opens the tokenizer and starts the replicas; rejects when the model or every replica fails. */
  async start(): Promise<void> {
    this.arena = await SharedArena.start({
      modelPath: this.options.config.model,
      requested: this.options.config.shared_arena === true,
      engines: this.replicas.size,
      enginePrivateBytes: this.options.config.shared_arena ? await this.enginePrivateBytes() : 0,
      log: (line) => this.log(line),
      ...(this.options.arenaFacts ? { facts: this.options.arenaFacts } : {}),
    });
    this.replicas.loadModelFrom(this.arena.modelPath);
    this.tokenizerValue = await Tokenizer.open(this.arena.modelPath);
    await this.replicas.start();
    this.started = true;
    this.log(`workstation ready: ${this.replicas.info().replicas_alive}/${this.replicas.size} replicas of ${this.modelId}`);
  }

  /** The largest private memory one engine's plan is estimated to take (the arena's RAM warning). */
  private async enginePrivateBytes(): Promise<number> {
    const model = this.options.config.model;
    const header = await readGgufFileHeader(model).catch((error: Error) => {
      throw new ArenaError(`cannot read ${model} into the arena: ${error.message}`);
    });
    const estimates = this.replicas.plans.map(({ engine }) =>
      enginePrivateBytes(header, { contextSize: engine.contextSize ?? 4096, slots: engine.slots ?? 1, kvType: engine.kvType ?? 'f16', gpuLayers: engine.gpuLayers ?? 'auto' }),
    );
    return Math.max(0, ...estimates);
  }

  arenaStatus(): ArenaStatus {
    return this.arena?.status() ?? { state: 'off', kind: null, reason: 'the workstation has not started', modelBytes: 0, filledBytes: 0, sha256: null, enginePath: null, warning: null, fillMs: null };
  }

  /** GPU figures now: NVML's cards with the replicas using them, else the engines' VRAM state, else none. */
  gpuReport(): GpuReport {
    return this.gpus.report(this.replicas.engineGpuStates());
  }

  get tokenizer(): Tokenizer {
    if (!this.tokenizerValue) throw new Error('the workstation has not started');
    return this.tokenizerValue;
  }

  get routingPolicy(): RoutingPolicy {
    return this.replicas.routingPolicy;
  }

  setRoutingPolicy(policy: RoutingPolicy): void {
    this.replicas.setRoutingPolicy(policy);
  }

  status(): { status: WorkstationStatus; reasons: string[] } {
    if (!this.started) return { status: 'loading', reasons: ['replicas are starting'] };
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
    for (const o of outcomes) this.log(`rebuild of replica ${o.replica}: ${o.outcome}${'reason' in o ? ` (${o.reason})` : ''}`);
    return outcomes;
  }

  onRebuildProgress(listener: (progress: RebuildProgress) => void): () => void {
    this.rebuildListeners.add(listener);
    return () => this.rebuildListeners.delete(listener);
  }

  throughputSample(): EventPayload<'throughput'> {
    const views = this.replicas.replicaView();
    return {
      at: Date.now(),
      tokensPerSecond: this.throughput.tokensPerSecond(),
      running: views.reduce((sum, r) => sum + r.running, 0),
      waiting: this.replicas.waiting,
    };
  }

  log(line: string): void {
    this.logLines.push(line);
    if (this.logLines.length > LOG_LINES_KEPT) this.logLines.shift();
    this.options.log?.(line);
    for (const listener of this.logListeners) listener(line);
  }

  recentLogs(): readonly string[] {
    return this.logLines;
  }

  onLog(listener: (line: string) => void): () => void {
    this.logListeners.add(listener);
    return () => this.logListeners.delete(listener);
  }

  /** Stops the replicas, then releases the tokenizer, the arena and NVML. */
  async close(): Promise<void> {
    await this.replicas.close();
    await this.tokenizerValue?.dispose();
    this.tokenizerValue = undefined;
    this.arena?.close();
    this.gpus.close();
    this.started = false;
  }
}
