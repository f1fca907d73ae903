/**
 * `manifold`, the command line for a headless box (in the style of `lms` / `ollama`): `serve` (as
 * `npm run serve`), `pull <hf-uri>`, `ls`, `ps`, `rm <name>`, `unload`, `engine install`, `engine calibrate`. Each takes
 * `--json` (one JSON line for scripts). It talks to the `serve` of the data dir through `serve.json`
 * (URL and control token) and the admin routes; `pull`, `ls` and `rm` work on the models folder
 * directly when no serve runs there.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { describeProgress, type DownloadProgress } from '../../common/model-download.js';
import { formatBytes } from '../../common/format-bytes.js';
import { GpuMonitor } from '../core/gpu/gpu-report.js';
import { installLlamaServer } from '../core/llama-server/engine-install.js';
import type { EngineBackend } from '../core/llama-server/release-asset.js';
import { downloadModel } from '../core/models/model-download.js';
import { suggestLayoutFor } from '../core/models/model-inspector.js';
import { ModelLibrary } from '../core/models/model-library.js';
import { defaultDataDir } from '../core/serve.js';
import { calibrateEngines } from './engine-calibrate.js';
import { readServeFile, type ServeFile } from './serve-file.js';

const USAGE = `usage: manifold <command> [--json] [--data-dir DIR] [--models-dir DIR]
  serve [serve's options]      the headless workstation (npm run serve -- --help)
  pull <hf-uri>                download a model: hf:owner/repo/file.gguf, hf:owner/repo:Q4_K_M or a URL (HF_TOKEN for gated repos)
  ls                           the models folder, with metadata; the loaded model marked
  ps                           the running serve's replicas, slots and queue
  rm <name>                    delete a model of the models folder (not the loaded one)
  unload                       unload the running serve's model
  engine install [--backend auto|cpu|vulkan|cuda|metal]   install llama.cpp's llama-server release
  engine calibrate <model> [--threads N]   measure which engine kind is faster here; the default engine follows it`;

class CliError extends Error {}

interface Context {
  json: boolean;
  dataDir: string;
  modelsDir: string;
  serve: ServeFile | null;
}

/** A call on the running serve's admin routes; its refusal in words. */
async function admin<T>(serve: ServeFile, call: string, body: object = {}): Promise<T> {
  const response = await fetch(`${serve.url}/admin/${call}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${serve.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
  if (!response.ok) throw new CliError(answer?.error?.message ?? `${serve.url}/admin/${call} answered ${response.status}`);
  return answer as T;
}

const needServe = (ctx: Context, command: string): ServeFile => {
  if (!ctx.serve) throw new CliError(`${command}: no serve runs for ${ctx.dataDir} (start one with \`manifold serve\`)`);
  return ctx.serve;
};

/** Prints progress: a bar rewritten in place on a terminal, a line every 10% otherwise, nothing with --json. */
function progressPrinter(json: boolean): (p: DownloadProgress) => void {
  let lastTenth = -1;
  return (p) => {
    if (json || p.state !== 'downloading' || p.totalBytes === 0) return;
    const fraction = p.downloadedBytes / p.totalBytes;
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round(fraction * width);
      process.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${describeProgress(p)}\x1b[K`);
    } else if (Math.floor(fraction * 10) > lastTenth) {
      lastTenth = Math.floor(fraction * 10);
      console.error(`${p.file ?? p.uri}: ${describeProgress(p)}`);
    }
  };
}

async function pull(ctx: Context, uri: string | undefined): Promise<unknown> {
  if (!uri) throw new CliError('pull: give a model URI, e.g. hf:owner/repo/file.gguf or hf:owner/repo:Q4_K_M');
  const show = progressPrinter(ctx.json);
  let result: { path: string; files: string[]; bytes: number };
  if (ctx.serve) {
    const serve = ctx.serve;
    let done = false;
    const watching = (async () => {
      while (!done) {
        const mine = (await admin<DownloadProgress[]>(serve, 'downloads').catch(() => [])).find((d) => d.uri === uri);
        if (mine) show(mine);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    try {
      result = await admin(serve, 'pull', { uri });
    } finally {
      done = true;
      await watching;
    }
  } else {
    result = await downloadModel({ uri, modelsDir: ctx.modelsDir, onProgress: show }).catch((error: unknown) => {
      throw new CliError((error as Error).message);
    });
  }
  if (process.stderr.isTTY && !ctx.json) process.stderr.write('\n');
  if (!ctx.json) console.log(`pulled ${uri}: ${result.path} (${formatBytes(result.bytes)})`);
  return { uri, ...result };
}

async function ls(ctx: Context): Promise<unknown> {
  const listing = ctx.serve
    ? await admin<{ modelsDir: string | null; models: LibraryRow[] }>(ctx.serve, 'ls')
    : { modelsDir: ctx.modelsDir, models: await new ModelLibrary(ctx.dataDir, ctx.modelsDir).list(null, (header) => suggestLayoutFor(header, null)) };
  if (!ctx.json) {
    if (listing.models.length === 0) console.log(`no models in ${listing.modelsDir ?? 'a models folder'}`);
    for (const m of listing.models) {
      const facts = [m.architecture, m.parameters === null ? null : `${(m.parameters / 1e6).toFixed(1)} M params`, m.quantisation, formatBytes(m.bytes), m.contextLength === null ? null : `ctx ${m.contextLength}`];
      console.log(`${m.loaded ? '* ' : '  '}${m.file}  ${facts.filter((f) => f !== null).join(', ')}${m.error ? `  (${m.error})` : ''}`);
    }
  }
  return listing;
}

type LibraryRow = Awaited<ReturnType<ModelLibrary['list']>>[number];

async function ps(ctx: Context): Promise<unknown> {
  const serve = needServe(ctx, 'ps');
  const [info, replicas, slots, throughput] = await Promise.all([
    admin<{ model: string; status: string; replicas: number; replicas_alive: number }>(serve, 'info'),
    admin<{ replica: number; state: string; slots: number; running: number; pid: number | null }[]>(serve, 'replicas'),
    admin<{ replica: number; replicaSlot: number; state?: string }[]>(serve, 'slots'),
    admin<{ running: number; waiting: number; tokensPerSecond: number }>(serve, 'throughput'),
  ]);
  if (!ctx.json) {
    console.log(`${info.model || 'no model'} · ${info.status} · ${info.replicas_alive}/${info.replicas} replicas · ${throughput.running} running, ${throughput.waiting} queued · ${throughput.tokensPerSecond.toFixed(1)} tok/s`);
    for (const r of replicas) console.log(`  replica ${r.replica}: ${r.state}, ${r.running}/${r.slots} slots busy${r.pid === null ? '' : `, pid ${r.pid}`}`);
  }
  return { info, replicas, slots, queue: throughput };
}

async function rm(ctx: Context, name: string | undefined): Promise<unknown> {
  if (!name) throw new CliError('rm: name the model (its file name in the models folder, as `manifold ls` shows it)');
  const result = ctx.serve
    ? await admin<{ deleted: string[] }>(ctx.serve, 'rm', { path: name })
    : { deleted: await new ModelLibrary(ctx.dataDir, ctx.modelsDir).remove(name, null).catch((error: unknown) => Promise.reject(new CliError((error as Error).message))) };
  if (!ctx.json) for (const file of result.deleted) console.log(`deleted ${file}`);
  return result;
}

async function unload(ctx: Context): Promise<unknown> {
  const info = await admin<{ status: string }>(needServe(ctx, 'unload'), 'unload');
  if (!ctx.json) console.log(`unloaded; the workstation is ${info.status}`);
  return info;
}

/** How many GPUs NVML sees (none without NVML or a card). */
function detectedGpuCount(): number {
  const monitor = new GpuMonitor();
  try {
    return monitor.detectedCards().length;
  } finally {
    monitor.close();
  }
}

/** `auto`: Metal on a Mac, a GPU NVML sees → Vulkan on Linux, CUDA on Windows; else the CPU build. */
function autoBackend(platform: NodeJS.Platform, gpus: number): EngineBackend {
  if (platform === 'darwin') return 'metal';
  if (gpus > 0) return platform === 'win32' ? 'cuda' : 'vulkan';
  return 'cpu';
}

async function engineInstall(ctx: Context, backendArg: string): Promise<unknown> {
  const backends = ['auto', 'cpu', 'vulkan', 'cuda', 'metal'];
  if (!backends.includes(backendArg)) throw new CliError(`--backend must be one of ${backends.join(', ')}, got ${backendArg}`);
  let backend = backendArg as EngineBackend | 'auto';
  if (backend === 'auto') backend = autoBackend(process.platform, detectedGpuCount());
  const show = progressPrinter(ctx.json);
  const result = await installLlamaServer({
    backend,
    ...(process.env.MANIFOLD_GITHUB_API ? { apiBase: process.env.MANIFOLD_GITHUB_API } : {}),
    ...(process.env.GITHUB_TOKEN ? { githubToken: process.env.GITHUB_TOKEN } : {}),
    onProgress: (p) => show({ uri: p.file, file: p.file, state: 'downloading', downloadedBytes: p.bytes, totalBytes: p.totalBytes, bytesPerSecond: p.bytesPerSecond, etaSeconds: null, path: null, error: null }),
  }).catch((error: unknown) => Promise.reject(new CliError((error as Error).message)));
  if (process.stderr.isTTY && !ctx.json) process.stderr.write('\n');
  if (!ctx.json) console.log(`installed llama-server ${result.tag} (${backend}): ${result.binary}\n${result.version}`);
  return { backend, ...result };
}

async function engineCalibrate(ctx: Context, model: string | undefined, threadsArg: string): Promise<unknown> {
  if (!model) throw new CliError('engine calibrate: give a model, a .gguf path or a name in the models folder');
  const path = resolve(existsSync(model) ? model : join(ctx.modelsDir, model));
  if (!existsSync(path)) throw new CliError(`engine calibrate: no model at ${model} nor ${path}`);
  const threads = Number(threadsArg);
  if (!Number.isInteger(threads) || threads < 0) throw new CliError(`--threads must be a whole number (0: each engine's default), got ${threadsArg}`);
  const rate = (n: number): string => `${n.toFixed(1)} tok/s`;
  const { calibration, path: written } = await calibrateEngines({
    model: path,
    threads,
    dataDir: ctx.dataDir,
    gpus: detectedGpuCount(),
    onMeasured: (kind, f) => {
      if (!ctx.json) console.log(`${kind}: prefill ${rate(f.prefillTokensPerSecond)}, decode ${rate(f.decodeTokensPerSecond)}, the request ${f.seconds.toFixed(2)} s`);
    },
  }).catch((error: unknown) => Promise.reject(new CliError((error as Error).message)));
  if (!ctx.json) console.log(`faster here: ${calibration.faster} (a config without engine.kind runs it; written to ${written})`);
  return { ...calibration, path: written };
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'serve') {
    // serve-cli parses process.argv and runs on import.
    process.argv = [process.argv[0]!, join(import.meta.dirname, '..', 'serve-cli.ts'), ...rest];
    await import('../serve-cli.js');
    return;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      'data-dir': { type: 'string' },
      'models-dir': { type: 'string' },
      backend: { type: 'string', default: 'auto' },
      threads: { type: 'string', default: '0' },
      help: { type: 'boolean' },
    },
  });
  if (!command || command === 'help' || values.help) {
    console.log(USAGE);
    return;
  }
  const dataDir = values['data-dir'] ?? defaultDataDir();
  const ctx: Context = { json: values.json ?? false, dataDir, modelsDir: values['models-dir'] ?? join(dataDir, 'models'), serve: readServeFile(dataDir) };
  const run: Record<string, () => Promise<unknown>> = {
    pull: () => pull(ctx, positionals[0]),
    ls: () => ls(ctx),
    ps: () => ps(ctx),
    rm: () => rm(ctx, positionals[0]),
    unload: () => unload(ctx),
    engine: () => {
      if (positionals[0] === 'install') return engineInstall(ctx, values.backend);
      if (positionals[0] === 'calibrate') return engineCalibrate(ctx, positionals[1], values.threads);
      return Promise.reject(new CliError('engine: the subcommands are `install` and `calibrate`'));
    },
  };
  const handler = run[command];
  if (!handler) throw new CliError(`unknown command ${command}`);
  const result = await handler();
  if (ctx.json) console.log(JSON.stringify(result));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const json = process.argv.includes('--json');
  const message = error instanceof CliError || error instanceof TypeError ? error.message : `manifold failed: ${(error as Error).message}`;
  if (json) console.log(JSON.stringify({ error: message }));
  else console.error(`manifold: ${message}`);
  if (!(error instanceof CliError)) console.error(USAGE);
  process.exit(1);
});
