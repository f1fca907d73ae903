/** Engine kind `node-llama-cpp`: each replica an engine child that runs llama.cpp through node-llama-cpp (engine-bin/). */
import type { EngineKind } from '../kind/engine-kind.js';
import { EngineSupervisor } from './engine-supervisor.js';

export const nodeLlamaCppKind: EngineKind = {
  name: 'node-llama-cpp',
  describe: 'node-llama-cpp in an engine child of each replica (nothing to install; the default where llama-server is not installed)',
  embeds: true,
  driver: (plan, setup, supervision) =>
    new EngineSupervisor({
      ...supervision,
      spawn: setup.spawn,
      load: {
        modelPath: setup.modelPath,
        ...plan.engine,
        prefixCache: { ...plan.engine.prefixCache, ...(setup.prefixCacheDir ? { diskDir: setup.prefixCacheDir } : {}) },
        ...(setup.testOnlyEngineFaults ? { testOnlyFaults: setup.testOnlyEngineFaults } : {}),
      },
    }),
};
