/**
 * The driver of a remote replica (a ReplicaDriver, kind/replica-driver.ts): the link to
 * a server on another machine that already runs the model. Starting it asks the peer what it is
 * (peer-probe.ts), checks it serves the expected model (model-match.ts) and synthesizes the ReadyInfo a
 * local engine would give. While ready it polls the peer's health; a poll that fails (the generations
 * that have no token yet are then failed, so they fail over now), or a start that cannot reach the
 * peer, is an `unreachable` exit, and the link then reconnects by itself with back-off
 * (1 s doubling to 30 s), emitting `ready` when the peer answers again — the heal of a remote replica is a
 * reconnect. A peer that serves another model, refuses the API key or answers nonsense is a
 * `load_failed` exit: the link waits to be started again (the replica set's heal policy does that slowly).
 */
import { EventEmitter } from 'node:events';
import type { LogLevel } from '../../common/contract.js';
import type { ReadyInfo } from '../../common/engine-protocol.js';
import type { RemoteKind, RemotePlan } from '../config/remote-plan.js';
import type { LogSink } from '../logging/core-log.js';
import { describeExit, type DriverEvents, type ExitReason, type SupervisorState } from '../supervisor/child-life.js';
import type { ReplicaDriver } from '../kind/replica-driver.js';
import type { CompletionDialect } from './completion-dialect.js';
import { llamaServerDialect } from './llama-server-dialect.js';
import { matchPeerModel, type ExpectedModel } from './model-match.js';
import { manifoldDialect, openAiDialect } from './openai-dialect.js';
import { getPeerJson, type PeerAddress } from './peer-http.js';
import { describePeer, healthPath, type PeerDescription, type PeerModel } from './peer-probe.js';
import { RemoteClient } from './remote-client.js';
import { RemoteLostError } from './remote-errors.js';

export interface RemoteLinkOptions {
  /** Replica index, for log prefixes. */
  readonly replica: number;
  readonly plan: RemotePlan;
  /** The model every replica must serve, read at each connect (the workstation learns it when it validates the file). */
  readonly expected: () => ExpectedModel;
  readonly log: LogSink;
  /** How often a ready peer's health is polled. */
  readonly healthIntervalMs?: number;
}

const DIALECTS: Readonly<Record<RemoteKind, CompletionDialect>> = {
  'llama-server': llamaServerDialect,
  manifold: manifoldDialect,
  openai: openAiDialect,
};

/** Slots assumed for a peer that does not say how many it has (an OpenAI-style server) when the plan gives none. */
export const DEFAULT_REMOTE_SLOTS = 4;

export const RECONNECT_FIRST_MS = 1000;
export const RECONNECT_MAX_MS = 30_000;

/** A local engine's ReadyInfo as far as the peer tells it: zeros and nulls where it does not. */
function readyInfoOf(description: PeerDescription, model: PeerModel, slots: number, loadMs: number): ReadyInfo {
  const meta = model.meta;
  return {
    model: {
      name: model.id,
      architecture: meta?.architecture ?? null,
      trainContextSize: meta?.n_ctx_train ?? 0,
      vocabSize: meta?.n_vocab ?? 0,
      parameters: meta?.n_params ?? 0,
      fileBytes: meta?.size ?? 0,
    },
    sizes: { contextSize: description.contextSize ?? 0, slots, gpuLayers: 0, batchSize: 0, flashAttention: false, kvType: 'f16', contextStateBytes: 0 },
    backend: `remote:${description.kind}`,
    vram: { total: 0, used: 0, free: 0 },
    ram: { total: 0, used: 0, free: 0 },
    loadMs,
    modelLoads: 0,
  };
}

export class RemoteLink extends EventEmitter<DriverEvents> implements ReplicaDriver {
  private stateValue: SupervisorState = 'idle';
  private current: RemoteClient | undefined;
  private kindValue: RemoteKind | null;
  private latency: number | null = null;
  private healthTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectDelayMs = RECONNECT_FIRST_MS;
  /** Aborts the probe or health poll in flight (a stop). */
  private inFlight: AbortController | undefined;
  private closed = false;
  private readonly peer: PeerAddress;
  private readonly healthIntervalMs: number;

  constructor(private readonly options: RemoteLinkOptions) {
    super();
    this.peer = { url: options.plan.url, apiKey: options.plan.apiKey };
    this.kindValue = options.plan.kind === 'auto' ? null : options.plan.kind;
    this.healthIntervalMs = options.healthIntervalMs ?? 2000;
  }

  get state(): SupervisorState {
    return this.stateValue;
  }

  /** The ready peer's client; undefined unless ready. */
  get client(): RemoteClient | undefined {
    return this.stateValue === 'ready' ? this.current : undefined;
  }

  /** A remote replica has no local process. */
  get pid(): undefined {
    return undefined;
  }

  get url(): string {
    return this.peer.url;
  }

  /** The peer's kind: the plan's, or what detection found; null until detected. */
  get kind(): RemoteKind | null {
    return this.kindValue;
  }

  /** The last health check's round trip in ms; null before the first. */
  get latencyMs(): number | null {
    return this.latency;
  }

  /** The server, for the views (ReplicaDriver's `remote`). */
  get remote(): { url: string; kind: string; latencyMs: number | null } {
    return { url: this.url, kind: this.kindValue ?? 'auto', latencyMs: this.latency };
  }

  /** Whether the link is waiting to reconnect to a peer that stopped answering (it heals by itself). */
  get reconnecting(): boolean {
    return this.reconnectTimer !== undefined;
  }

  /** Connects: resolves when the peer is ready; rejects (and emits `exit`) when it cannot be. */
  async start(): Promise<ReadyInfo> {
    if (this.stateValue === 'starting' || this.stateValue === 'ready')
      throw new Error(`replica ${this.options.replica} (${this.url}) is already ${this.stateValue}`);
    this.closed = false;
    this.cancelReconnect();
    return this.connect(false);
  }

  /**
   * One attempt. `quiet`: a reconnect, whose failure to reach the peer is already reported (the link
   * stays exited and tries again later).
   */
  private async connect(quiet: boolean): Promise<ReadyInfo> {
    this.stateValue = 'starting';
    const attempt = new AbortController();
    this.inFlight = attempt;
    const startedAt = performance.now();
    try {
      const description = await describePeer(this.peer, this.options.plan.kind, this.options.plan.timeouts.connectMs, attempt.signal);
      this.kindValue = description.kind;
      const model = matchPeerModel(this.url, description.models, this.options.expected(), this.options.plan.model);
      const slots = this.options.plan.slots ?? description.slots ?? DEFAULT_REMOTE_SLOTS;
      const info = readyInfoOf(description, model, slots, performance.now() - startedAt);
      this.latency = description.latencyMs;
      this.current = new RemoteClient({
        peer: this.peer,
        dialect: DIALECTS[description.kind],
        model: model.id,
        contextSize: description.contextSize ?? 0,
        timeouts: this.options.plan.timeouts,
      });
      this.stateValue = 'ready';
      this.reconnectDelayMs = RECONNECT_FIRST_MS;
      this.scheduleHealth();
      this.log(
        `ready: ${description.kind}, ${slots} slots × ${info.sizes.contextSize || '?'} tokens of ${model.id}, ${Math.round(description.latencyMs)} ms round trip`,
      );
      this.emit('ready', info);
      return info;
    } catch (error) {
      if (this.inFlight !== attempt) throw error;
      this.inFlight = undefined;
      this.stateValue = 'exited';
      if (attempt.signal.aborted) throw new Error(`replica ${this.options.replica} (${this.url}) was stopped while connecting`);
      if (error instanceof RemoteLostError) {
        if (!quiet) this.exited({ kind: 'unreachable', message: error.message });
        else this.log(`still unreachable (${error.message}); next try in ${Math.round(this.reconnectDelayMs / 1000)} s`, 'warn');
        this.scheduleReconnect();
      } else {
        this.exited({ kind: 'load_failed', message: (error as Error).message });
      }
      throw error;
    } finally {
      if (this.inFlight === attempt) this.inFlight = undefined;
    }
  }

  private scheduleHealth(): void {
    this.healthTimer = setTimeout(() => void this.pollHealth(), this.healthIntervalMs);
    this.healthTimer.unref();
  }

  private async pollHealth(): Promise<void> {
    this.healthTimer = undefined;
    if (this.stateValue !== 'ready' || this.kindValue === null) return;
    const poll = new AbortController();
    this.inFlight = poll;
    const path = healthPath(this.kindValue);
    let problem: string | undefined;
    try {
      const answer = await getPeerJson(this.peer, path, this.options.plan.timeouts.connectMs, poll.signal);
      this.latency = answer.roundTripMs;
      if (answer.status !== 200) problem = `GET ${path} answered ${answer.status}`;
    } catch (error) {
      problem = (error as Error).message;
    } finally {
      if (this.inFlight === poll) this.inFlight = undefined;
    }
    if (poll.signal.aborted || this.stateValue !== 'ready') return;
    if (problem === undefined) return this.scheduleHealth();
    const message = problem.startsWith(this.url) ? problem : `${this.url}: ${problem}`;
    this.current?.abandon(`stopped answering (${message.slice(this.url.length + 2)})`, 'without-tokens');
    this.current = undefined;
    this.stateValue = 'exited';
    this.exited({ kind: 'unreachable', message });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(RECONNECT_MAX_MS, delay * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect(true).catch(() => {});
    }, delay);
    this.reconnectTimer.unref();
  }

  private cancelReconnect(): void {
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }

  private exited(reason: ExitReason): void {
    this.log(`exited: ${describeExit(reason)}`, reason.kind === 'stopped' ? 'info' : 'warn');
    this.emit('exit', reason);
  }

  /**
   * Disconnects: stops polling and reconnecting, fails the generations still running on the peer (as
   * lost, so none hangs), and emits `exit` {stopped} when it was ready or connecting.
   */
  async stop(): Promise<void> {
    const wasLive = this.stateValue === 'ready' || this.stateValue === 'starting';
    this.cancelReconnect();
    clearTimeout(this.healthTimer);
    this.healthTimer = undefined;
    this.inFlight?.abort();
    this.inFlight = undefined;
    this.current?.abandon('the link to it was stopped', 'all');
    this.current = undefined;
    if (!wasLive) return;
    this.stateValue = 'exited';
    this.exited({ kind: 'stopped' });
  }

  /** Clears every timer; the link does not reconnect until started again. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelReconnect();
    clearTimeout(this.healthTimer);
    this.healthTimer = undefined;
    this.inFlight?.abort();
  }

  private log(line: string, level: LogLevel = 'info'): void {
    this.options.log(`[replica ${this.options.replica} ${this.url}] ${line}`, level);
  }
}
