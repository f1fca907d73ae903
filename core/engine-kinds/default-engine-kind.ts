/**
 * Which engine kind a replica runs when its config names none: where llama-server's binary is installed,
 * the faster kind as `manifold engine calibrate` measured it on this machine, and llama-server before any
 * calibration (the faster engine on every figure measured side by side on an AMD EPYC; on an Intel Xeon
 * with AMX node-llama-cpp was faster at one thread until llama-server's child ran without flash attention
 * on the CPU: docs/BENCHMARKS.md, `peer`); node-llama-cpp
 * elsewhere (nothing to install). `MANIFOLD_ENGINE_KIND` overrides the choice for a whole process tree
 * (the test suite pins node-llama-cpp with it, so each test says which engine it exercises); an unknown
 * value is an error in words, not a silent fallback.
 */
import { findLlamaServer } from '../../common/node/llama-server-binary.js';
import type { EngineCalibration } from '../config/engine-calibration.js';
import { engineKind } from './engine-kinds.js';

export const ENGINE_KIND_VARIABLE = 'MANIFOLD_ENGINE_KIND';

/** Whether llama-server's binary is installed (built or downloaded) where Manifold looks for it. */
export const llamaServerFound = (): boolean => findLlamaServer() !== null;

/**
 * The kind for a config without `engine.kind`; `binaryFound` says whether llama-server is installed, and
 * `calibration` is this machine's verdict of `manifold engine calibrate` (engine-calibration.ts), if any.
 */
export function defaultEngineKind({
  env = process.env,
  binaryFound = llamaServerFound,
  calibration = null,
}: { env?: NodeJS.ProcessEnv; binaryFound?: () => boolean; calibration?: EngineCalibration | null } = {}): string {
  const named = env[ENGINE_KIND_VARIABLE];
  if (named !== undefined && named !== '') {
    return engineKind(named, ENGINE_KIND_VARIABLE).name;
  }
  if (!binaryFound()) return 'node-llama-cpp';
  return calibration?.faster ?? 'llama-server';
}
