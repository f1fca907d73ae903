/** vitest: unit tests (pure logic) and integration tests (real engine children on the generated model). */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Engines are real processes on a 2-core machine: run files one at a time so timings stay sane.
    fileParallelism: false,
    // Each test says which engine kind it exercises: a config without `engine.kind` runs node-llama-cpp
    // here, even where llama-server is installed (where users get it by default: core/engine-kinds/default-engine-kind.ts).
    env: { MANIFOLD_ENGINE_KIND: 'node-llama-cpp' },
  },
});
