/**
 * The supervisor of one replica's engine child: spawns it with its cards' env, loads the model, watches
 * it (a heartbeat ping; no answer within the bound means hung: it is killed — core's own stalls do not
 * count), stops it gracefully and then kills it, prefixes its log lines with `[replica N pid]` and gives
 * them a level, and says why it exited (with Electron's reason when the engine is a utility process).
 * Each start is a new child; healing (when and whether to start again) belongs to the replica set.
 */
import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';
import type { LogLevel } from '../../common/contract.js';
import type { LoadOptionsInput, ReadyInfo } from '../../common/engine-protocol.js';
import { EngineClient } from '../engine/engine-client.js';
import { engineChildEnv } from '../engine/engine-child-env.js';
import type { EngineExit, EngineGoneReason, SpawnEngine } from '../engine/engine-process.js';
import type { LogSink } from '../logging/core-log.js';
import { startHeartbeat } from './heartbeat.js';
import { ReplicaLog } from './replica-log.js';
import { supervisorTiming, type SupervisorTiming } from './supervisor-timing.js';
import { pinChild, type ChildPinning } from './child-pinning.js';

export type ExitReason =
  | { kind: 'stopped' }
  | { kind: 'crashed'; code: number | null; signal: string | null; reason?: EngineGoneReason }
  | { kind: 'hung'; silentMs: number }
  | { kind: 'load_failed'; message: string }
  /** A remote replica stopped answering (its link reconnects by itself). */
  | { kind: 'unreachable'; message: string };

export type SupervisorState = 'idle' | 'starting' | 'ready' | 'stopping' | 'exited';

export interface EngineSupervisorOptions extends Partial<SupervisorTiming> {
  /** Replica index, for log prefixes. */
  replica: number;
  /** The log prefix's name instead of `replica N` (the embedding engine, which is no replica). */
  name?: string;
  /** Starts the child process (fork under Node, utilityProcess in Electron). */
  spawn: SpawnEngine;
  /** Environment for the child: card visibility and the replica's env (libuv's pool is sized to the slots: engine-child-env.ts). */
  env: Readonly<Record<string, string>>;
  /** What the engine loads once it is up. */
  load: LoadOptionsInput;
  /** Receives every log line, already prefixed. */
  log: LogSink;
  /** Also append log lines to this rotating file (`<log>.r<i>`). */
  logFile?: string | null;
  /** Pins the child's threads to the replica's cores; called after spawn and again once loaded. */
  pinning?: ChildPinning;
}

interface SupervisorEvents {
  ready: [ReadyInfo];
  exit: [ExitReason];
}

export class EngineSupervisor extends EventEmitter<SupervisorEvents> {
  private current: EngineClient | undefined;
  private stateValue: SupervisorState = 'idle';
  private stopRequested = false;
  private hung: { silentMs: number } | undefined;
  private loadFailure: string | undefined;
  private stopHeartbeat: (() => void) | undefined;
  private readonly replicaLog: ReplicaLog;
  private readonly timing: SupervisorTiming;
  private load: LoadOptionsInput;

  constructor(private readonly options: EngineSupervisorOptions) {
    super();
    this.load = options.load;
    this.timing = supervisorTiming(options);
    this.replicaLog = new ReplicaLog(options.name ?? `replica ${options.replica}`, options.log, options.logFile, () => this.pid);
  }

  get state(): SupervisorState {
    return this.stateValue;
  }

  /** The live engine's client; undefined unless ready. */
  get client(): EngineClient | undefined {
    return this.stateValue === 'ready' ? this.current : undefined;
  }

  get pid(): number | undefined {
    return this.current?.process.pid;
  }

  /** Spawns a new child and loads the model; rejects (with the child gone) when it does not come up. */
  async start(): Promise<ReadyInfo> {
    if (this.stateValue === 'starting' || this.stateValue === 'ready') throw new Error(`replica ${this.options.replica} is already ${this.stateValue}`);
    this.stateValue = 'starting';
    this.stopRequested = false;
    this.hung = undefined;
    this.loadFailure = undefined;
    // The pinned CPUs are known before the spawn, which sizes the child's thread pool for them.
    const cpus = this.options.pinning?.cpus().length || availableParallelism();
    const child = this.options.spawn({ env: engineChildEnv(this.options.env, this.load.slots ?? 1, cpus) });
    const client = new EngineClient(child, (problem) => this.log(`protocol: ${problem}`, 'warn'));
    this.current = client;
    child.onLog((line) => this.log(line, engineLineLevel(line)));
    void client.exited.then((exit) => this.onChildExit(client, exit));
    this.log('starting');
    const pin = (): Promise<void> => pinChild(this.options.pinning, child.pid);
    const pinnedAtSpawn = pin();

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`loading took longer than ${this.timing.loadTimeoutMs} ms`)), this.timing.loadTimeoutMs);
    });
    try {
      const info = await Promise.race([client.load(this.load), timeout]);
      if (this.current !== client || !client.alive) throw new Error('the engine exited while loading');
      // Threads made during the load by threads pinned at spawn inherit the set; pinning again catches any other.
      await pinnedAtSpawn;
      await pin();
      this.stateValue = 'ready';
      this.startWatchdog(client);
      this.log(`ready: ${info.sizes.slots} slots × ${info.sizes.contextSize} tokens on ${info.backend} in ${Math.round(info.loadMs)} ms`);
      this.emit('ready', info);
      return info;
    } catch (error) {
      this.loadFailure = (error as Error).message;
      this.log(`start failed: ${this.loadFailure}`, 'error');
      child.kill('SIGKILL');
      await client.exited;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** What the engine loads at its next start. */
  get loadOptions(): LoadOptionsInput {
    return this.load;
  }

  /** What later starts load: a rebuild's new sizes, or the arena's path; a restart keeps them. */
  updateLoad(change: Partial<LoadOptionsInput>): void {
    this.load = { ...this.load, ...change };
  }

  /** Asks the engine to shut down, then kills it after the grace period. Resolves once it has exited. */
  async stop(): Promise<void> {
    const client = this.current;
    if (!client || !client.alive) return;
    this.stopRequested = true;
    this.stateValue = 'stopping';
    const grace = setTimeout(() => client.process.kill('SIGKILL'), this.timing.stopGraceMs);
    try {
      await client.shutdown();
    } finally {
      clearTimeout(grace);
    }
  }

  /** Sends a signal to the child (tests use SIGKILL and SIGSTOP to stand in for real failures). */
  signal(signal: NodeJS.Signals): void {
    this.current?.process.kill(signal);
  }

  private startWatchdog(client: EngineClient): void {
    this.stopHeartbeat = startHeartbeat({
      everyMs: this.timing.heartbeatMs,
      hangAfterMs: this.timing.hangTimeoutMs,
      alive: () => client.ping().then(() => true),
      onHung: (silentMs) => {
        this.hung = { silentMs };
        this.log(`hung: no heartbeat for ${silentMs} ms; killing`, 'warn');
        client.process.kill('SIGKILL');
      },
    });
  }

  private onChildExit(client: EngineClient, exit: EngineExit): void {
    if (this.current !== client) return;
    this.stopHeartbeat?.();
    const reason: ExitReason = this.stopRequested
      ? { kind: 'stopped' }
      : this.hung
        ? { kind: 'hung', silentMs: this.hung.silentMs }
        : this.loadFailure !== undefined
          ? { kind: 'load_failed', message: this.loadFailure }
          : { kind: 'crashed', code: exit.code, signal: exit.signal, ...(exit.reason ? { reason: exit.reason } : {}) };
    this.stateValue = 'exited';
    this.log(`exited: ${describeExit(reason)}`, reason.kind === 'stopped' ? 'info' : 'warn');
    this.emit('exit', reason);
  }

  private log(line: string, level: LogLevel = 'info'): void {
    this.replicaLog.write(line, level);
  }

  /** Writes out and closes the log file (after the last stop). */
  close(): Promise<void> {
    return this.replicaLog.close();
  }
}

/** The level of a line the engine printed: llama.cpp's warnings and errors, an uncaught failure; the rest is debug (the log file, the dashboard's engine output). */
export function engineLineLevel(line: string): LogLevel {
  const llama = /^llama\.cpp (\w+):/.exec(line)?.[1];
  if (llama === 'warn') return 'warn';
  if (llama === 'error' || llama === 'fatal' || /^(uncaught exception|unhandled rejection):/.test(line)) return 'error';
  return 'debug';
}

const GONE_REASON_WORDS: Record<EngineGoneReason, string> = {
  'clean-exit': 'exited cleanly',
  'abnormal-exit': 'exited abnormally',
  killed: 'killed',
  crashed: 'crashed',
  oom: 'out of memory',
  'launch-failed': 'failed to launch',
  'integrity-failure': 'failed a code integrity check',
  'memory-eviction': 'evicted to free memory',
};

export function describeExit(reason: ExitReason): string {
  switch (reason.kind) {
    case 'stopped': return 'stopped';
    case 'crashed': {
      const codes = `code ${reason.code ?? 'none'}, signal ${reason.signal ?? 'none'}`;
      return reason.reason ? `crashed: ${GONE_REASON_WORDS[reason.reason]} (reason ${reason.reason}, ${codes})` : `crashed (${codes})`;
    }
    case 'hung': return `hung (silent for ${reason.silentMs} ms)`;
    case 'load_failed': return `failed to load: ${reason.message}`;
    case 'unreachable': return `unreachable: ${reason.message}`;
  }
}
