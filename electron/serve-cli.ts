/**
 * `npm run serve`: the headless workstation for a machine without a display. With no arguments it
 * serves the generated test model as 2 CPU replicas; `--config file.json`, `--model path.gguf`,
 * `--replicas N`, `--port P`, `--host H`, `--api-key K` choose otherwise; `--idle` starts with no model
 * (the dashboard's loader loads one); `--data-dir` keeps conversations and logs/, `--models-dir` is the folder
 * the loader lists. The built UI (`npm run build:ui`) is served at `/`. Ctrl-C stops the engines.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureTestModel } from '../build/test-model.js';
import { ConfigError, parseRunConfig } from './core/config/run-config.js';
import { terminalLine } from './core/logging/core-log.js';
import { serve } from './core/serve.js';

const USAGE =
  'usage: npm run serve -- [--config run.json] [--model model.gguf] [--replicas N] [--idle] [--port 8080] [--host 127.0.0.1] [--api-key KEY] [--data-dir DIR] [--models-dir DIR]';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      model: { type: 'string' },
      replicas: { type: 'string' },
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      'api-key': { type: 'string' },
      idle: { type: 'boolean' },
      'data-dir': { type: 'string' },
      'models-dir': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  let raw: Record<string, unknown> = {};
  if (values.config) {
    try {
      raw = JSON.parse(await readFile(values.config, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(`cannot read the config ${values.config}: ${(error as Error).message}`);
    }
  }
  if (values.model) raw.model = values.model;
  if (values.replicas) raw.replicas = Number(values.replicas);
  if (raw.model === undefined && !values.idle) {
    raw.model = await ensureTestModel('tiny');
    raw.replicas ??= 2;
    raw.engine ??= { contextSize: 4096, slots: 2 };
    console.error(`no model given: serving the generated test model ${raw.model as string}`);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port must be a port number, got ${values.port}`);

  const config = raw.model === undefined ? null : parseRunConfig(raw);
  const uiDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'renderer');
  if (!existsSync(join(uiDir, 'index.html'))) console.error('the UI is not built: run `npm run build:ui` for the dashboard (the API works without it)');
  const served = await serve(config, {
    log: (line, level) => console.error(terminalLine(line, level)),
    front: { host: values.host, port, apiKey: values['api-key'] ?? null, uiDir },
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
    modelsDir: values['models-dir'] ?? null,
  });
  console.log(`OpenAI-compatible API: ${served.front.url}/v1`);
  console.log(`Dashboard:             ${served.front.dashboardUrl}`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.error('stopping engines…');
    served.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `config error: ${error.message}` : `manifold serve failed: ${(error as Error).message}`);
  console.error(USAGE);
  process.exit(1);
});
