/**
 * The life both local replica supervisors share (the node-llama-cpp engine child's, the llama-server
 * child's): the state, what the next start loads, the start that may run once at a time, the heartbeat
 * watchdog that kills a hung child, the exit announced with its reason, and the replica's log. Each kind
 * says how its child is spawned, asked whether it is alive, and stopped.
 */
import { EventEmitter } from 'node:events';
import type { LogLevel } from '../../common/contract.js';
import type { LoadOptionsInput } from '../../common/engine-protocol.js';
import type { LogSink } from '../logging/core-log.js';
import { ChildLife, describeExit, type DriverEvents, type ExitReason, type SupervisorState } from './child-life.js';
import type { ChildPinning } from './child-pinning.js';
import { startHeartbeat } from './heartbeat.js';
import { ReplicaLog } from './replica-log.js';
import { supervisorTiming, type SupervisorTiming } from './supervisor-timing.js';

export interface LocalSupervisorOptions extends Partial<SupervisorTiming> {
  /** Replica index, for log prefixes. */
  replica: number;
  /** The log prefix's name instead of `replica N` (the embedding engine, which is no replica). */
  name?: string;
  /** Environment for the child over the parent's: card visibility and the replica's env. */
  env: Readonly<Record<string, string>>;
  /** What the child loads once it is up. */
  load: LoadOptionsInput;
  /** Receives every log line, already prefixed. */
  log: LogSink;
  /** Also append log lines to this rotating file (`<log>.r<i>`). */
  logFile?: string | null;
  /** Pins the child's threads to the replica's cores; called after spawn and again once loaded. */
  pinning?: ChildPinning;
}

export abstract class LocalSupervisor extends EventEmitter<DriverEvents> {
  protected stateValue: SupervisorState = 'idle';
  protected readonly life = new ChildLife();
  protected readonly timing: SupervisorTiming;
  protected load: LoadOptionsInput;
  private readonly replicaLog: ReplicaLog;
  private stopHeartbeat: (() => void) | undefined;

  constructor(protected readonly options: LocalSupervisorOptions) {
    super();
    this.load = options.load;
    this.timing = supervisorTiming(options);
    this.replicaLog = new ReplicaLog(options.name ?? `replica ${options.replica}`, options.log, options.logFile, () => this.pid);
  }

  get state(): SupervisorState {
    return this.stateValue;
  }

  /** The running child's pid; undefined before its spawn. */
  abstract get pid(): number | undefined;

  /** Sends a signal to the child (tests use SIGKILL and SIGSTOP to stand in for real failures). */
  abstract signal(signal: NodeJS.Signals): void;

  /** Its process on this machine (the replica driver's `local` capability). */
  get local(): this {
    return this;
  }

  /** What the child loads at its next start. */
  get loadOptions(): LoadOptionsInput {
    return this.load;
  }

  /** What later starts load: a resize's new sizes, or the arena's path; a restart keeps them. */
  updateLoad(change: Partial<LoadOptionsInput>): void {
    this.load = { ...this.load, ...change };
  }

  /** A new child's start: refused while one starts or serves. */
  protected beginStart(): void {
    if (this.stateValue === 'starting' || this.stateValue === 'ready') throw new Error(`replica ${this.options.replica} is already ${this.stateValue}`);
    this.stateValue = 'starting';
    this.life.reset();
  }

  /** A start that failed: said, and kept as the exit's reason. */
  protected startFailed(error: unknown): void {
    this.life.loadFailure = (error as Error).message;
    this.log(`start failed: ${this.life.loadFailure}`, 'error');
  }

  /** Watches a ready child: `alive` asks it (`what`: its silence in words, for the log); silence past the hang bound kills it with `kill`. */
  protected watch(alive: () => Promise<boolean>, kill: () => void, what: string): void {
    this.stopHeartbeat = startHeartbeat({
      everyMs: this.timing.heartbeatMs,
      hangAfterMs: this.timing.hangTimeoutMs,
      alive,
      onHung: (silentMs) => {
        this.life.hung = { silentMs };
        this.log(`hung: ${what} for ${silentMs} ms; killing`, 'warn');
        kill();
      },
    });
  }

  /** The child is gone: the watchdog stops, the state is `exited`, and the reason is logged; returns it. */
  protected exited(reason: ExitReason): ExitReason {
    this.stopHeartbeat?.();
    this.stateValue = 'exited';
    this.log(`exited: ${describeExit(reason)}`, reason.kind === 'stopped' ? 'info' : 'warn');
    return reason;
  }

  protected log(line: string, level: LogLevel = 'info'): void {
    this.replicaLog.write(line, level);
  }

  /** Writes out and closes the log file (after the last stop). */
  close(): Promise<void> {
    return this.replicaLog.close();
  }
}
