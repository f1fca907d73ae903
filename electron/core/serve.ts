/**
 * The headless workstation: a run config started as a workstation with its front in front of it. The
 * `npm run serve` CLI and the tests start it the same way; the Electron shell will start the same
 * workstation with IPC instead of a browser.
 */
import os from 'node:os';
import { join } from 'node:path';
import type { ArenaFacts } from './arena/arena-plan.js';
import type { RunConfig } from './config/run-config.js';
import { forkEngine, forkTokenizer, type SpawnEngine, type SpawnTokenizer } from './engine/engine-process.js';
import { GpuMonitor } from './gpu/gpu-report.js';
import { startFront, type Front, type FrontOptions } from './http/front-server.js';
import type { ReplicaSetOptions } from './replicas/replica-set.js';
import { Workstation, type WorkstationOptions } from './workstation.js';

export interface ServeOptions {
  front?: FrontOptions;
  log?: (line: string) => void;
  spawn?: SpawnEngine;
  /** Starts a model's tokenizer child; `child_process.fork` by default (utilityProcess under Electron). */
  spawnTokenizer?: SpawnTokenizer;
  tokenizerOptions?: WorkstationOptions['tokenizerOptions'];
  replicaOptions?: Partial<ReplicaSetOptions>;
  arenaFacts?: Partial<ArenaFacts>;
  /** Conversations and recent models; default: `$XDG_DATA_HOME/manifold` (or ~/.local/share/manifold). */
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
    spawnTokenizer: options.spawnTokenizer ?? forkTokenizer,
    ...(options.tokenizerOptions ? { tokenizerOptions: options.tokenizerOptions } : {}),
    ...(options.log ? { log: options.log } : {}),
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
