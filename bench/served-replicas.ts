/** Starts the headless workstation for a benchmark run (quiet logs, a free port) and gives its OpenAI target. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRunConfig, type RunConfig } from '../core/config/run-config.js';
import { serve, type Served } from '../core/serve.js';
import type { ClientTarget } from './workload.js';

export async function withServed<T>(config: Partial<RunConfig> & { model: string }, body: (target: ClientTarget, served: Served) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), 'manifold-bench-'));
  const served = await serve(parseRunConfig({ gpu: 'cpu', ...config }), { front: { port: 0 }, dataDir });
  try {
    return await body({ baseURL: `${served.front.url}/v1`, model: served.workstation.modelId }, served);
  } finally {
    await served.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
