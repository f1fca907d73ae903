/**
 * `npm run serve`: the headless workstation for a machine without a display. With no arguments it
 * serves the generated test model as 2 CPU replicas; `--config file.json`, `--model path.gguf`,
 * `--replicas N`, `--port P`, `--host H`, `--api-key K` choose otherwise; `--idle` starts with no model
 * (the Models page loads one); `--data-dir` keeps conversations, logs/ and the control
 * token (`control-token`: the dashboard link stays the same across restarts; `--new-token` replaces it),
 * and `serve.json` (how the `manifold` CLI finds this serve); `--models-dir` is the folder the loader lists
 * and downloads go to (default `<data dir>/models`). The built UI (`npm run build:ui`) is served at `/`. Ctrl-C or SIGTERM stops
 * gracefully: running answers get `--shutdown-grace MS` (default: the config's `shutdownGraceMs`, else
 * 10 s) to finish, then the engines stop and it exits 0; a second Ctrl-C ends the grace at once.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureTestModel } from '../build/test-model.js';
import { ConfigError, parseRunConfig } from './core/config/run-config.js';
import { terminalLine } from './core/logging/core-log.js';
import { PortTakenError } from './core/http/front-server.js';
import { defaultDataDir, serve } from './core/serve.js';
import { writeServeFile } from './cli/serve-file.js';

const USAGE =
  'usage: npm run serve -- [--config run.json] [--model model.gguf] [--replicas N] [--idle] [--port 8080] [--host 127.0.0.1] [--api-key KEY] [--data-dir DIR] [--models-dir DIR] [--shutdown-grace MS] [--new-token] [--verbose]';

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
      'shutdown-grace': { type: 'string' },
      'new-token': { type: 'boolean' },
      verbose: { type: 'boolean' },
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
  const grace = values['shutdown-grace'] === undefined ? undefined : Number(values['shutdown-grace']);
  if (grace !== undefined && (!Number.isInteger(grace) || grace < 0 || grace > 600_000)) {
    throw new ConfigError(`--shutdown-grace must be a whole number of milliseconds from 0 to 600000, got ${values['shutdown-grace']}`);
  }

  const config = raw.model === undefined ? null : parseRunConfig(raw);
  const uiDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'renderer');
  if (!existsSync(join(uiDir, 'index.html'))) console.error('the UI is not built: run `npm run build:ui` for the dashboard (the API works without it)');
  const served = await serve(config, {
    // The engines' own output is debug: in the log file always, here with --verbose.
    log: (line, level) => {
      if (level !== 'debug' || values.verbose) console.error(terminalLine(line, level));
    },
    front: { host: values.host, port, apiKey: values['api-key'] ?? null, uiDir },
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
    ...(values['models-dir'] ? { modelsDir: values['models-dir'] } : {}),
    ...(grace === undefined ? {} : { shutdownGraceMs: grace }),
    newToken: values['new-token'] ?? false,
  });
  // Ctrl-C and SIGTERM stop gracefully from before the URL is announced: whoever reads it may stop us at once.
  const cutGrace = new AbortController();
  let stoppingSince: number | null = null;
  const stop = (signal: NodeJS.Signals): void => {
    if (stoppingSince !== null) {
      // One Ctrl-C arrives more than once: from the terminal, and forwarded by npm and tsx. Only a later one is the user's second.
      if (performance.now() - stoppingSince < SAME_INTERRUPT_MS) return;
      console.error(`${signal} again: ending the grace period now`);
      cutGrace.abort();
      return;
    }
    stoppingSince = performance.now();
    console.error(`${signal}: stopping gracefully (again to stop at once)`);
    served.stop(undefined, cutGrace.signal).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`stopping failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // The `manifold` CLI finds this serve (URL and control token) here; removed on exit.
  await writeServeFile(values['data-dir'] ?? defaultDataDir(), { url: served.front.url, token: served.front.token });
  console.log(`OpenAI-compatible API: ${served.front.url}/v1`);
  console.log(`Dashboard:             ${served.front.dashboardUrl}`);
}

/** Signals within this long of the first are the same interrupt, delivered again. */
const SAME_INTERRUPT_MS = 1000;

function failure(error: unknown): string {
  if (error instanceof ConfigError) return `config error: ${error.message}`;
  if (error instanceof PortTakenError) return `${error.message}; use --port N or --port 0`;
  return `manifold serve failed: ${(error as Error).message}`;
}

main().catch((error: unknown) => {
  console.error(failure(error));
  console.error(USAGE);
  process.exit(1);
});
