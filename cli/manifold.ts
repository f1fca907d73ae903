/**
 * `manifold`, the command line for a headless box (in the style of `lms` / `ollama`): `serve` (as
 * `npm run serve`), `search <query>`, `pull <hf-uri>`, `ls`, `ps`, `rm <name>`, `unload`, `engine install`, `engine calibrate`,
 * each described by `--help` (commander parses them). Each takes `--json` (one JSON line for scripts). It talks to the `serve` of the data dir
 * through `serve.json`
 * (URL and control token) and the admin routes; `pull`, `ls` and `rm` work on the models folder
 * directly when no serve runs there.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { describeProgress, type DownloadProgress } from '../common/model-download.js';
import { formatBytes } from '../common/format-bytes.js';
import type { LibraryEntry } from '../common/model-library.js';
import type { EngineBackend } from '../core/llama-server/release-asset.js';
import { defaultDataDir } from '../core/config/data-dir.js';
import { readServeFile, type ServeFile } from './serve-file.js';

// What only some commands need is imported when they run: `ps` and `ls` on a serve answer without loading
// the downloader, the GPU monitor or the engine installer.
const library = async () => {
  const [{ ModelLibrary }, { suggestLayoutFor }] = await Promise.all([import('../core/models/model-library.js'), import('../core/models/model-inspector.js')]);
  return { ModelLibrary, suggestLayoutFor };
};

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

async function pull(ctx: Context, uri: string): Promise<unknown> {
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
    const { downloadModel } = await import('../core/models/model-download.js');
    result = await downloadModel({ uri, modelsDir: ctx.modelsDir, onProgress: show }).catch((error: unknown) => {
      throw new CliError((error as Error).message);
    });
  }
  if (process.stderr.isTTY && !ctx.json) process.stderr.write('\n');
  if (!ctx.json) console.log(`pulled ${uri}: ${result.path} (${formatBytes(result.bytes)})`);
  return { uri, ...result };
}

async function search(ctx: Context, words: string, files: boolean): Promise<unknown> {
  const hub = await import('../core/models/hub-search.js');
  const found = await (files ? hub.hubFiles(words) : hub.searchHub(words)).catch((error: unknown) => Promise.reject(new CliError((error as Error).message)));
  if (!ctx.json) {
    if (found.length === 0) console.log(files ? `no GGUF file in ${words}` : `no GGUF repository matches ${words}`);
    for (const item of found)
      console.log('uri' in item ? `${item.uri}  ${formatBytes(item.bytes)}` : `${item.id}  ${item.downloads.toLocaleString('en')} downloads`);
  }
  return files ? { repo: words, files: found } : { query: words, models: found };
}

async function ls(ctx: Context): Promise<unknown> {
  const listing = ctx.serve ? await admin<{ modelsDir: string | null; models: LibraryRow[] }>(ctx.serve, 'ls') : await localListing(ctx);
  if (!ctx.json) {
    if (listing.models.length === 0) console.log(`no models in ${listing.modelsDir ?? 'a models folder'}`);
    for (const m of listing.models) {
      const facts = [
        m.architecture,
        m.parameters === null ? null : `${(m.parameters / 1e6).toFixed(1)} M params`,
        m.quantisation,
        formatBytes(m.bytes),
        m.contextLength === null ? null : `ctx ${m.contextLength}`,
      ];
      console.log(`${m.loaded ? '* ' : '  '}${m.file}  ${facts.filter((f) => f !== null).join(', ')}${m.error ? `  (${m.error})` : ''}`);
    }
  }
  return listing;
}

type LibraryRow = LibraryEntry;

async function localListing(ctx: Context): Promise<{ modelsDir: string; models: LibraryRow[] }> {
  const { ModelLibrary, suggestLayoutFor } = await library();
  return { modelsDir: ctx.modelsDir, models: await new ModelLibrary(ctx.dataDir, ctx.modelsDir).list(null, (header) => suggestLayoutFor(header, null)) };
}

async function ps(ctx: Context): Promise<unknown> {
  const serve = needServe(ctx, 'ps');
  const [info, replicas, slots, throughput] = await Promise.all([
    admin<{ model: string; status: string; replicas: number; replicas_alive: number }>(serve, 'info'),
    admin<{ replica: number; state: string; slots: number; running: number; pid: number | null }[]>(serve, 'replicas'),
    admin<{ replica: number; replicaSlot: number; state?: string }[]>(serve, 'slots'),
    admin<{ running: number; waiting: number; tokensPerSecond: number }>(serve, 'throughput'),
  ]);
  if (!ctx.json) {
    console.log(
      `${info.model || 'no model'} · ${info.status} · ${info.replicas_alive}/${info.replicas} replicas · ${throughput.running} running, ${throughput.waiting} queued · ${throughput.tokensPerSecond.toFixed(1)} tok/s`,
    );
    for (const r of replicas) console.log(`  replica ${r.replica}: ${r.state}, ${r.running}/${r.slots} slots busy${r.pid === null ? '' : `, pid ${r.pid}`}`);
  }
  return { info, replicas, slots, queue: throughput };
}

async function rm(ctx: Context, name: string): Promise<unknown> {
  const result = ctx.serve
    ? await admin<{ deleted: string[] }>(ctx.serve, 'rm', { path: name })
    : {
        deleted: await new (await library()).ModelLibrary(ctx.dataDir, ctx.modelsDir)
          .remove(name, null)
          .catch((error: unknown) => Promise.reject(new CliError((error as Error).message))),
      };
  if (!ctx.json) for (const file of result.deleted) console.log(`deleted ${file}`);
  return result;
}

async function unload(ctx: Context): Promise<unknown> {
  const info = await admin<{ status: string }>(needServe(ctx, 'unload'), 'unload');
  if (!ctx.json) console.log(`unloaded; the workstation is ${info.status}`);
  return info;
}

/** How many GPUs NVML sees (none without NVML or a card). */
async function detectedGpuCount(): Promise<number> {
  const { GpuMonitor } = await import('../core/gpu/gpu-report.js');
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
  let backend = backendArg as EngineBackend | 'auto';
  if (backend === 'auto') backend = autoBackend(process.platform, await detectedGpuCount());
  const show = progressPrinter(ctx.json);
  const { installLlamaServer } = await import('../core/llama-server/engine-install.js');
  const result = await installLlamaServer({
    backend,
    ...(process.env.MANIFOLD_GITHUB_API ? { apiBase: process.env.MANIFOLD_GITHUB_API } : {}),
    ...(process.env.GITHUB_TOKEN ? { githubToken: process.env.GITHUB_TOKEN } : {}),
    onProgress: (p) =>
      show({
        uri: p.file,
        file: p.file,
        state: 'downloading',
        downloadedBytes: p.bytes,
        totalBytes: p.totalBytes,
        bytesPerSecond: p.bytesPerSecond,
        etaSeconds: null,
        path: null,
        error: null,
      }),
  }).catch((error: unknown) => Promise.reject(new CliError((error as Error).message)));
  if (process.stderr.isTTY && !ctx.json) process.stderr.write('\n');
  if (!ctx.json) console.log(`installed llama-server ${result.tag} (${backend}): ${result.binary}\n${result.version}`);
  return { backend, ...result };
}

async function engineCalibrate(ctx: Context, model: string, threadsArg: string): Promise<unknown> {
  const path = resolve(existsSync(model) ? model : join(ctx.modelsDir, model));
  if (!existsSync(path)) throw new CliError(`engine calibrate: no model at ${model} nor ${path}`);
  const threads = Number(threadsArg);
  if (!Number.isInteger(threads) || threads < 0) throw new CliError(`--threads must be a whole number (0: each engine's default), got ${threadsArg}`);
  const rate = (n: number): string => `${n.toFixed(1)} tok/s`;
  const { calibrateEngines } = await import('./engine-calibrate.js');
  const { calibration, path: written } = await calibrateEngines({
    model: path,
    threads,
    dataDir: ctx.dataDir,
    gpus: await detectedGpuCount(),
    onMeasured: (kind, f) => {
      if (!ctx.json)
        console.log(`${kind}: prefill ${rate(f.prefillTokensPerSecond)}, decode ${rate(f.decodeTokensPerSecond)}, the request ${f.seconds.toFixed(2)} s`);
    },
  }).catch((error: unknown) => Promise.reject(new CliError((error as Error).message)));
  if (!ctx.json) console.log(`faster here: ${calibration.faster} (a config without engine.kind runs it; written to ${written})`);
  return { ...calibration, path: written };
}

/** The command line: commands with their descriptions and options, each refusal in words (commander). */
function program(): Command {
  const cli = new Command('manifold')
    .description('Manifold from a terminal: the headless workstation, and the models and engines of its data dir (in the manner of lms and ollama).')
    .option('--json', 'print one JSON line, for scripts')
    .option('--data-dir <dir>', 'the data dir (default: $XDG_DATA_HOME/manifold or ~/.local/share/manifold)')
    .option('--models-dir <dir>', 'the models folder (default: <data dir>/models)')
    .showHelpAfterError('(manifold --help lists the commands)');
  const context = (): Context => {
    const { json, dataDir: given, modelsDir } = cli.opts<{ json?: boolean; dataDir?: string; modelsDir?: string }>();
    const dataDir = given ?? defaultDataDir();
    return { json: json ?? false, dataDir, modelsDir: modelsDir ?? join(dataDir, 'models'), serve: readServeFile(dataDir) };
  };
  const print = (result: unknown, ctx: Context): void => {
    if (ctx.json) console.log(JSON.stringify(result));
  };
  const run =
    <A extends unknown[]>(action: (ctx: Context, ...args: A) => Promise<unknown>) =>
    async (...args: A): Promise<void> => {
      const ctx = context();
      print(await action(ctx, ...args), ctx);
    };
  cli
    .command('serve')
    .description('the headless workstation, as `npm run serve` (manifold serve --help lists its options)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[options...]')
    .action(async (options: string[]) => {
      // serve-command parses process.argv and runs on import.
      process.argv = [process.argv[0]!, 'serve', ...options];
      await import('./serve-command.js');
    });
  cli
    .command('pull')
    .description('download a model into the models folder (through the running serve when there is one; HF_TOKEN for gated repos)')
    .argument('<uri>', 'hf:owner/repo/file.gguf, hf:owner/repo:Q4_K_M, or an https URL')
    .action(run((ctx, uri: string) => pull(ctx, uri)));
  cli
    .command('search')
    .description("find GGUF models on the Hub (HF_ENDPOINT's), most downloaded first; with --files, a repository's GGUF files and the URI each pulls by")
    .argument('<words...>', 'what to look for, or with --files the repository (owner/name)')
    .option('--files', "list the named repository's GGUF files instead")
    .action(run((ctx, words: string[], options: { files?: boolean }) => search(ctx, words.join(' '), options.files === true)));
  cli
    .command('ls')
    .description("the models folder with each model's metadata; the loaded model marked *")
    .action(run((ctx) => ls(ctx)));
  cli
    .command('ps')
    .description('the running serve: its model, replicas, slots, queue and pace')
    .action(run((ctx) => ps(ctx)));
  cli
    .command('rm')
    .description('delete a model of the models folder (all parts of a split one; never the loaded one)')
    .argument('<name>', 'its file name in the models folder, as `manifold ls` shows it')
    .action(run((ctx, name: string) => rm(ctx, name)));
  cli
    .command('unload')
    .description("unload the running serve's model")
    .action(run((ctx) => unload(ctx)));
  const engine = cli.command('engine').description('the llama-server engine: install its release build, or measure which engine kind is faster here');
  engine
    .command('install')
    .description("install llama.cpp's llama-server release build where Manifold looks for it")
    .addOption(
      new Option('--backend <backend>', 'the build: auto picks Metal on a Mac, Vulkan or CUDA with a GPU, else the CPU build')
        .choices(['auto', 'cpu', 'vulkan', 'cuda', 'metal'])
        .default('auto'),
    )
    .action(run((ctx, options: { backend: string }) => engineInstall(ctx, options.backend)));
  engine
    .command('calibrate')
    .description('measure prefill and decode on both engine kinds; a config without engine.kind then runs the faster')
    .argument('<model>', 'a .gguf path, or a name in the models folder')
    .option('--threads <n>', "threads per engine (0: each engine's default)", '0')
    .action(run((ctx, model: string, options: { threads: string }) => engineCalibrate(ctx, model, options.threads)));
  return cli;
}

program()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    const json = process.argv.includes('--json');
    const message = error instanceof CliError ? error.message : `manifold failed: ${(error as Error).message}`;
    if (json) console.log(JSON.stringify({ error: message }));
    else console.error(`manifold: ${message}`);
    process.exit(1);
  });
