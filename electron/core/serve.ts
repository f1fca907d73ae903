/**
 * The headless workstation: a run config started as a workstation with its front in front of it. The
 * `npm run serve` CLI and the tests start it the same way; the Electron shell will start the same
 * workstation with IPC instead of a browser.
 */
import os from 'node:os';
import type { RunConfig } from './config/run-config.js';
import { forkEngine, type SpawnEngine } from './engine/engine-process.js';
import { startFront, type Front, type FrontOptions } from './http/front-server.js';
import type { ReplicaSetOptions } from './replicas/replica-set.js';
import { Workstation } from './workstation.js';

export interface ServeOptions {
  front?: FrontOptions;
  log?: (line: string) => void;
  spawn?: SpawnEngine;
  replicaOptions?: Partial<ReplicaSetOptions>;
}

export interface Served {
  workstation: Workstation;
  front: Front;
  close(): Promise<void>;
}

export async function serve(config: RunConfig, options: ServeOptions = {}): Promise<Served> {
  const workstation = new Workstation({
    config,
    // Cards come from the config's gpu list until NVML detection lands; without one, CPU engines.
    machine: { detectedGpus: [], cpuCores: os.availableParallelism() },
    spawn: options.spawn ?? forkEngine,
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
