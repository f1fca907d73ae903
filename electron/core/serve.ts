/**
 * The headless workstation: a run config started as a workstation with its front in front of it. The
 * `npm run serve` CLI and the tests start it the same way; the Electron shell will start the same
 * workstation with IPC instead of a browser.
 */
import os from 'node:os';
import { join } from 'node:path';
import type { ArenaFacts } from './arena/arena-plan.js';
import type { RunConfig } from './config/run-config.js';
import { forkEngine, type SpawnEngine } from './engine/engine-process.js';
import { GpuMonitor } from './gpu/gpu-report.js';
import { startFront, type Front, type FrontOptions } from './http/front-server.js';
import type { LogSink } from './logging/core-log.js';
import type { LogRotation } from './logging/log-file.js';
import type { ReplicaSetOptions } from './replicas/replica-set.js';
import { Workstation } from './workstation.js';

export interface ServeOptions {
  front?: FrontOptions;
  /** Also hand each log line here (the file is written either way). */
  log?: LogSink;
  /** Core's rotating log file; default `<dataDir>/logs/manifold.log`, null for none. */
  logFile?: string | null;
  logRotation?: LogRotation;
  spawn?: SpawnEngine;
  replicaOptions?: Partial<ReplicaSetOptions>;
  arenaFacts?: Partial<ArenaFacts>;
  /** Conversations, recent models and logs; default: `$XDG_DATA_HOME/manifold` (or ~/.local/share/manifold). */
  dataDir?: string;
  modelsDir?: string | null;
}

export function defaultDataDir(): string {
  return join(process.env.XDG_DATA_HOME ?? join(os.homedir(), '.local', 'share'), 'manifold');
}

export interface Served {
  workstation: Workstation;
  front: Front;
  close(): Promise<void>;
}

/** Starts a workstation (with `config`'s model, or empty for the loader) and its front. */
export async function serve(config: RunConfig | null, options: ServeOptions = {}): Promise<Served> {
  // A config without a card list uses the cards NVML sees; without NVML (or a GPU), CPU engines.
  const gpuMonitor = new GpuMonitor();
  const workstation = new Workstation({
    config,
    machine: { detectedGpus: gpuMonitor.detectedCards(), cpuCores: os.availableParallelism() },
    gpuMonitor,
    dataDir: options.dataDir ?? defaultDataDir(),
    modelsDir: options.modelsDir ?? null,
    ...(options.arenaFacts ? { arenaFacts: options.arenaFacts } : {}),
    spawn: options.spawn ?? forkEngine,
    ...(options.log ? { log: options.log } : {}),
    ...(options.logFile !== undefined ? { logFile: options.logFile } : {}),
    ...(options.logRotation ? { logRotation: options.logRotation } : {}),
    ...(options.replicaOptions ? { replicaOptions: options.replicaOptions } : {}),
  });
  try {
    await workstation.start();
  } catch (error) {
    await workstation.close();
    throw error;
  }
  const front = await startFront(workstation, options.front).catch(async (error: unknown) => {
    await workstation.close();
    throw error;
  });
  return {
    workstation,
    front,
    close: async () => {
      await front.close();
      await workstation.close();
    },
  };
}
