/**
 * An engine kind: what a run config's `engine.kind` names, and how a local replica of it is driven. Each
 * kind is one folder that implements this (node-llama-cpp/, llama-server/) and one line in engine-kinds/;
 * a remote replica is driven by remote/ whatever kind its server runs.
 */
import type { LoadOptionsInput } from '../../common/engine-protocol.js';
import type { ReplicaPlan } from '../config/run-config.js';
import type { SpawnEngine } from '../engine/engine-process.js';
import type { LogSink } from '../logging/core-log.js';
import type { ChildPinning } from '../supervisor/child-pinning.js';
import type { ReplicaDriver } from './replica-driver.js';

/** What a replica set knows that its drivers need: the plans, the model, how engine children are spawned and watched. */
export interface DriverSetup {
  plans: readonly ReplicaPlan[];
  modelPath: string;
  spawn: SpawnEngine;
  log: LogSink;
  watchdog?: { heartbeatMs?: number; hangTimeoutMs?: number };
  stopGraceMs?: number;
  /** The llama-server binary for replicas of engine kind `llama-server`; found as common/node/llama-server-binary.ts says when absent. */
  llamaServerBinary?: string;
  /** The prefix cache's disk tier, for every local engine (`<data dir>/prefix-cache`); absent: the system's temp folder. */
  prefixCacheDir?: string;
  /** Test-only: fault injection for live resize, given to every engine of the set (never from a config). */
  testOnlyEngineFaults?: LoadOptionsInput['testOnlyFaults'];
}

/** What every local driver is given, whatever its kind: its replica, env, log, watchdog timing and pinning. */
export interface Supervision {
  replica: number;
  env: Readonly<Record<string, string>>;
  log: LogSink;
  logFile: string | null;
  heartbeatMs?: number;
  hangTimeoutMs?: number;
  stopGraceMs?: number;
  pinning: ChildPinning;
}

export interface EngineKind {
  /** Its name in a run config's `engine.kind`. */
  readonly name: string;
  /** One line for the user: what runs each replica (a config naming an unknown kind lists these). */
  readonly describe: string;
  /** Whether its replicas answer embeddings themselves; where no replica of a set does, the set starts an embedding engine beside them. */
  readonly embeds: boolean;
  /** The driver of one local replica; throws a ConfigError when the kind cannot run here (say, its binary is missing). */
  driver(plan: ReplicaPlan, setup: DriverSetup, supervision: Supervision): ReplicaDriver;
}
