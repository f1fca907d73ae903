/**
 * Engine kind `llama-server`: each replica a child running llama.cpp's own server (`npm run build:llama-server`
 * or `manifold engine install`), spoken to over HTTP on a Unix socket (llama-server-supervisor.ts).
 */
import { findLlamaServer, llamaServerPath } from '../../common/node/llama-server-binary.js';
import { DEFAULT_PREFIX_CACHE_BYTES } from '../../common/prefix-cache.js';
import { ConfigError, type ReplicaPlan } from '../config/run-config.js';
import type { EngineKind } from '../kind/engine-kind.js';
import { cacheRamMib } from './llama-server-args.js';
import { LlamaServerSupervisor } from './llama-server-supervisor.js';

export const llamaServerKind: EngineKind = {
  name: 'llama-server',
  describe: "llama.cpp's server as each replica's child process (the default where its binary is installed)",
  // At the bundled llama.cpp a generative model's server refuses /v1/embeddings (replicas/embedding-engine.ts).
  embeds: false,
  driver: (plan, setup, supervision) =>
    new LlamaServerSupervisor({
      ...supervision,
      binary: llamaServerBinary(setup.llamaServerBinary),
      load: { modelPath: setup.modelPath, ...plan.engine },
      cacheRamMib: cacheRamMib(plan.engine.prefixCache),
      slotFileBytes: lendsSlotFiles(plan, setup.plans) ? (plan.engine.prefixCache?.diskBytes ?? DEFAULT_PREFIX_CACHE_BYTES.diskBytes) : 0,
    }),
};

/** Whether a llama-server replica has another on this machine to lend slot files to (slot-file-shelf.ts). */
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
