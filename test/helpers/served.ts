/** Test helper: the headless workstation started as `npm run serve` starts it, on the generated model and a free port. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { parseRunConfig, type RunConfig } from '../../core/config/run-config.js';
import { serve, type Served, type ServeOptions } from '../../core/serve.js';
import { testModelPath } from './engines.js';

const running: Served[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.close()));
});

/** `idle: true` starts it with no model, as `npm run serve -- --idle` does (the loader loads one). */
export async function startServed(config: Partial<RunConfig> = {}, options: ServeOptions & { idle?: boolean } = {}): Promise<Served & { logs: string[] }> {
  const logs: string[] = [];
  const { idle, ...serveOptions } = options;
  const served = await serve(
    idle ? null : parseRunConfig({ model: testModelPath(), gpu: 'cpu', replicas: 2, engine: { contextSize: 1024, slots: 2, threads: 1 }, ...config }),
    { log: (line) => logs.push(line), dataDir: mkdtempSync(join(tmpdir(), 'manifold-data-')), ...serveOptions, front: { port: 0, ...serveOptions.front } },
  );
  running.push(served);
  return { ...served, logs };
}
