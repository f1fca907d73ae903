/** Test helpers: a replica set of real engine children on the generated model, closed after each test file. */
import { afterAll } from 'vitest';
import { rebuildRequestSchema, type RebuildRequestInput, type ReplicaRebuildOutcome } from '../../common/rebuild.js';
import { parseRunConfig, type RunConfig } from '../../core/config/run-config.js';
import { forkEngine } from '../../core/engine/engine-process.js';
import { ReplicaSet, type ReplicaSetOptions } from '../../core/replicas/replica-set.js';
import type { EngineSupervisor } from '../../core/node-llama-cpp/engine-supervisor.js';
import type { LlamaServerSupervisor } from '../../core/llama-server/llama-server-supervisor.js';
import { testModelPath, waitFor } from './engines.js';

const sets: ReplicaSet[] = [];
afterAll(async () => {
  await Promise.all(sets.map((s) => s.close()));
});

export interface TestReplicaSet {
  set: ReplicaSet;
  logs: string[];
}

/** Plans `config` for a CPU machine (these tests have no GPU) and starts the set. */
export async function startReplicaSet(config: Partial<RunConfig>, options: Partial<ReplicaSetOptions> = {}): Promise<TestReplicaSet> {
  const logs: string[] = [];
  const parsed = parseRunConfig({ model: testModelPath(), gpu: 'cpu', engine: { contextSize: 1024, slots: 2, threads: 1 }, ...config });
  const set = ReplicaSet.fromConfig(
    parsed,
    { detectedGpus: [], cpuCores: 2, defaultEngineKind: 'node-llama-cpp' },
    {
      spawn: forkEngine,
      log: (line) => logs.push(line),
      ...options,
      heal: { cooldownMs: 300, ...parsed.heal, ...options.heal },
    },
  );
  sets.push(set);
  await set.start();
  return { set, logs };
}

export function waitForState(set: ReplicaSet, replica: number, state: string, timeoutMs = 20_000): Promise<true> {
  return waitFor(() => (set.replicaView()[replica]?.state === state ? true : undefined), `replica ${replica} to be ${state}`, timeoutMs);
}

/** Runs a rebuild as the admin route would: the request through its schema, progress to `onProgress`. */
export function rebuild(set: ReplicaSet, request: RebuildRequestInput, onProgress?: Parameters<ReplicaSet['rebuild']>[1]): Promise<ReplicaRebuildOutcome[]> {
  return set.rebuild(rebuildRequestSchema.parse(request), onProgress);
}

/**
 * Starts a rebuild and resolves once it has entered maintenance (the barrier it reports there), the
 * rebuild still running in `outcomes`; rejects with its outcomes when it ends before. Polling the
 * replica's state for 'maintenance' instead can miss a short maintenance on a busy machine.
 */
export async function rebuildInMaintenance(set: ReplicaSet, request: RebuildRequestInput): Promise<{ outcomes: Promise<ReplicaRebuildOutcome[]> }> {
  let entered!: (replica: number) => void;
  const maintenance = new Promise<number>((resolve) => (entered = resolve));
  const outcomes = rebuild(set, request, (progress) => {
    if (progress.stage === 'barrier') entered(progress.replica);
  });
  const replica = await Promise.race([
    maintenance,
    outcomes.then((ended) => Promise.reject(new Error(`the rebuild ended before its barrier: ${JSON.stringify(ended)}`))),
  ]);
  const state = set.replicaView()[replica]?.state;
  if (state !== 'maintenance') throw new Error(`the rebuild reported its barrier with replica ${replica} ${state}, not in maintenance`);
  return { outcomes };
}

/** Replica `index`'s node-llama-cpp engine supervisor (the test knows the set runs that kind). */
export const engineOf = (set: Pick<ReplicaSet, 'driverOf'>, index: number): EngineSupervisor => set.driverOf(index) as EngineSupervisor;

/** Replica `index`'s llama-server supervisor (the test knows the set runs that kind). */
export const llamaServerOf = (set: Pick<ReplicaSet, 'driverOf'>, index: number): LlamaServerSupervisor => set.driverOf(index) as LlamaServerSupervisor;
