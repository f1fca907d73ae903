/**
 * What runs a replica: a supervisor of its local child (a node-llama-cpp engine child, or a llama-server
 * child for engine kind `llama-server`) or the link to its remote server, built from its plan and the
 * replica set's options; and the llama-server binary that kind needs, or a ConfigError saying how to get it.
 */
import { findLlamaServer, llamaServerPath } from '../../common/node/llama-server-binary.js';
import { DEFAULT_PREFIX_CACHE_BYTES } from '../../common/prefix-cache.js';
import { ConfigError, type ReplicaPlan } from '../config/run-config.js';
import { cacheRamMib } from '../llama-server/llama-server-args.js';
import { LlamaServerSupervisor } from '../llama-server/llama-server-supervisor.js';
import type { ExpectedModel } from '../remote/model-match.js';
import { RemoteLink } from '../remote/remote-link.js';
import { EngineSupervisor } from '../supervisor/engine-supervisor.js';
import type { ReplicaDriver } from './replica-driver.js';
import type { LoadOptionsInput } from '../../common/engine-protocol.js';
import type { SpawnEngine } from '../engine/engine-process.js';
import type { LogSink } from '../logging/core-log.js';
import type { ChildPinning } from '../supervisor/child-pinning.js';

/** What a replica set knows that its drivers need: the plans, the model, how engines are spawned and watched. */
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

export function createReplicaDriver(plan: ReplicaPlan, options: DriverSetup, expected: () => ExpectedModel, pinning: ChildPinning): ReplicaDriver {
  if (plan.remote) return new RemoteLink({ replica: plan.index, plan: plan.remote, expected, log: options.log });
  const supervision = {
    replica: plan.index,
    env: plan.env,
    log: options.log,
    logFile: plan.logFile,
    ...options.watchdog,
    ...(options.stopGraceMs !== undefined ? { stopGraceMs: options.stopGraceMs } : {}),
    pinning,
  };
  if (plan.engineKind === 'llama-server') {
    return new LlamaServerSupervisor({
      ...supervision,
      binary: llamaServerBinary(options.llamaServerBinary),
      load: { modelPath: options.modelPath, ...plan.engine },
      cacheRamMib: cacheRamMib(plan.engine.prefixCache),
      slotFileBytes: lendsSlotFiles(plan, options.plans) ? (plan.engine.prefixCache?.diskBytes ?? DEFAULT_PREFIX_CACHE_BYTES.diskBytes) : 0,
    });
  }
  return new EngineSupervisor({
    ...supervision,
    spawn: options.spawn,
    load: {
      modelPath: options.modelPath,
      ...plan.engine,
      prefixCache: { ...plan.engine.prefixCache, ...(options.prefixCacheDir ? { diskDir: options.prefixCacheDir } : {}) },
      ...(options.testOnlyEngineFaults ? { testOnlyFaults: options.testOnlyEngineFaults } : {}),
    },
  });
}

/** Whether a llama-server replica has another on this machine to lend slot files to (llama-server/slot-file-shelf.ts). */
function lendsSlotFiles(plan: ReplicaPlan, plans: readonly ReplicaPlan[]): boolean {
  return plans.some((other) => other !== plan && other.engineKind === 'llama-server' && !other.remote);
}

/** The binary a `llama-server` replica runs (the given one, else the build cache's); a ConfigError saying how to get it when there is none. */
function llamaServerBinary(given: string | undefined): string {
  const binary = given ?? findLlamaServer();
  if (binary !== null) return binary;
  let lookedAt: string;
  try {
    lookedAt = ` (looked for ${llamaServerPath()})`;
  } catch (error) {
    lookedAt = ` (${(error as Error).message})`;
  }
  throw new ConfigError(
    `engine.kind: "llama-server" needs llama.cpp's llama-server binary and none was found${lookedAt}; ` +
      'build it from the llama.cpp node-llama-cpp ships with `npm run build:llama-server` (about 10 minutes on 2 cores), ' +
      'set MANIFOLD_LLAMA_SERVER to a llama-server binary, or use "engine": {"kind": "node-llama-cpp"}',
  );
}
