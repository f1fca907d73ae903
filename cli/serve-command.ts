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
import { Command } from 'commander';
import { ensureTestModel } from '../build/test-model.js';
import { ConfigError, parseRunConfig } from '../core/config/run-config.js';
import { terminalLine } from '../core/logging/core-log.js';
import { PortTakenError } from '../core/http/front-server.js';
import { serve } from '../core/serve.js';
import { defaultDataDir } from '../core/config/data-dir.js';
import { writeServeFile } from './serve-file.js';

/** serve's options, each described for `--help` (commander). */
function options(): Command {
  return new Command('serve')
    .description('The headless workstation: the OpenAI-compatible API and the dashboard, on the replicas of one model.')
    .option('--config <file>', 'a run config (JSON: model, replicas, engine, routing, …)')
    .option('--model <file>', 'the GGUF to serve (none: the generated test model, or --idle)')
    .option('--replicas <n>', 'how many replicas of it')
    .option('--idle', 'start with no model: load one from the dashboard or `manifold`')
    .option('--port <port>', 'the port (0: a free one)', '8080')
    .option('--host <host>', 'the address to bind (loopback unless you say otherwise)', '127.0.0.1')
    .option('--api-key <key>', 'a key /v1/*, /tokenize and /detokenize require')
    .option('--data-dir <dir>', 'conversations, logs, the control token (default: $XDG_DATA_HOME/manifold or ~/.local/share/manifold)')
    .option('--models-dir <dir>', 'the models folder (default: <data dir>/models)')
    .option('--shutdown-grace <ms>', 'how long running answers get to finish on Ctrl-C or SIGTERM (default 10000)')
    .option('--new-token', 'make a new control token (open dashboard tabs must use the new link)')
    .option('--verbose', "also print the engines' output (llama-server's start-up and timings), which the log file always has")
    .showHelpAfterError();
}

interface ServeOptions {
  config?: string;
  model?: string;
  replicas?: string;
  idle?: boolean;
  port: string;
  host: string;
  apiKey?: string;
  dataDir?: string;
  modelsDir?: string;
  shutdownGrace?: string;
  newToken?: boolean;
  verbose?: boolean;
}

async function main(): Promise<void> {
  const values = options().parse(process.argv).opts<ServeOptions>();
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
  const grace = values.shutdownGrace === undefined ? undefined : Number(values.shutdownGrace);
  if (grace !== undefined && (!Number.isInteger(grace) || grace < 0 || grace > 600_000)) {
    throw new ConfigError(`--shutdown-grace must be a whole number of milliseconds from 0 to 600000, got ${values.shutdownGrace}`);
  }

  const config = raw.model === undefined ? null : parseRunConfig(raw);
  const uiDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'renderer');
  if (!existsSync(join(uiDir, 'index.html'))) console.error('the UI is not built: run `npm run build:ui` for the dashboard (the API works without it)');
  const served = await serve(config, {
    // The engines' own output is debug: in the log file always, here with --verbose.
    log: (line, level) => {
      if (level !== 'debug' || values.verbose) console.error(terminalLine(line, level));
    },
    front: { host: values.host, port, apiKey: values.apiKey ?? null, uiDir },
    ...(values.dataDir ? { dataDir: values.dataDir } : {}),
    ...(values.modelsDir ? { modelsDir: values.modelsDir } : {}),
    ...(grace === undefined ? {} : { shutdownGraceMs: grace }),
    newToken: values.newToken ?? false,
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
  await writeServeFile(values.dataDir ?? defaultDataDir(), { url: served.front.url, token: served.front.token });
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
  console.error('(npm run serve -- --help lists the options)');
  process.exit(1);
});
