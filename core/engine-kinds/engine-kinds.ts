/**
 * The engine kinds, one line each (a kind is one folder implementing kind/engine-kind.ts), and the driver
 * of each replica: its kind's, or for a remote replica the link to its server (remote/, by dialect).
 * A run config names a kind by its name; an unknown name is a ConfigError that lists the kinds.
 */
import { ConfigError, type ReplicaPlan } from '../config/run-config.js';
import type { DriverSetup, EngineKind } from '../kind/engine-kind.js';
import type { ReplicaDriver } from '../kind/replica-driver.js';
import { llamaServerKind } from '../llama-server/llama-server-kind.js';
import { EngineSupervisor } from '../node-llama-cpp/engine-supervisor.js';
import { nodeLlamaCppKind } from '../node-llama-cpp/node-llama-cpp-kind.js';
import type { ExpectedModel } from '../remote/model-match.js';
import { RemoteLink } from '../remote/remote-link.js';
import type { ChildPinning } from '../supervisor/child-pinning.js';

const kinds = new Map<string, EngineKind>();

/** Adds a kind (the built-in ones below; a test adds a stand-in). */
export function registerEngineKind(kind: EngineKind): void {
  kinds.set(kind.name, kind);
}

registerEngineKind(nodeLlamaCppKind);
registerEngineKind(llamaServerKind);

/** The names a run config's `engine.kind` may take. */
export const engineKindNames = (): string[] => [...kinds.keys()];

/** The kind a run config names; a ConfigError listing the kinds when there is none of that name. */
export function engineKind(name: string, where = 'engine.kind'): EngineKind {
  const kind = kinds.get(name);
  if (kind) return kind;
  const known = [...kinds.values()].map((k) => `"${k.name}" (${k.describe})`).join(', or ');
  throw new ConfigError(`${where}: "${name}" is not an engine kind; use ${known}`);
}

/**
 * The driver of the embedding engine a set starts where no replica's kind embeds (replicas/embedding-engine.ts):
 * a node-llama-cpp engine child of the model on the CPU, one slot, logged as `embeddings`.
 */
export function embeddingDriver(setup: Pick<DriverSetup, 'spawn' | 'modelPath' | 'log'>, contextSize: number): ReplicaDriver {
  return new EngineSupervisor({
    replica: -1,
    name: 'embeddings',
    spawn: setup.spawn,
    env: {},
    log: setup.log,
    load: { modelPath: setup.modelPath, contextSize, slots: 1, gpuLayers: 0, threads: 0 },
  });
}

/** The driver of one replica: the link to its server when remote, else its engine kind's. */
export function createReplicaDriver(plan: ReplicaPlan, setup: DriverSetup, expected: () => ExpectedModel, pinning: ChildPinning): ReplicaDriver {
  if (plan.remote) return new RemoteLink({ replica: plan.index, plan: plan.remote, expected, log: setup.log });
  return engineKind(plan.engineKind ?? nodeLlamaCppKind.name).driver(plan, setup, {
    replica: plan.index,
    env: plan.env,
    log: setup.log,
    logFile: plan.logFile,
    ...setup.watchdog,
    ...(setup.stopGraceMs !== undefined ? { stopGraceMs: setup.stopGraceMs } : {}),
    pinning,
  });
}
