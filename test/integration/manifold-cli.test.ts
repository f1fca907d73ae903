/**
 * The `manifold` CLI (bin/manifold.js) against a real `manifold serve` and a loopback Hub: serve writes
 * serve.json (0600) and removes it on exit; pull (one JSON line, plain lines, or a bar on a terminal), ls,
 * ps with a loaded model, a second load refused without replace, rm refusing the loaded model then deleting, unload; ls and rm on the folder
 * with no serve; `engine install` against a loopback release host; `engine calibrate` on both engine kinds,
 * and a serve following its verdict.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledLlamaRelease, findLlamaServer, llamaServerCacheDir } from '../../common/node/llama-server-binary.js';
import { writeCalibration } from '../../cli/engine-calibrate.js';
import { CALIBRATION_FILE, readCalibration, thisMachine, type EngineCalibration } from '../../core/config/engine-calibration.js';
import { CALIBRATED_KINDS as ENGINE_KINDS } from '../../core/config/engine-calibration.js';
import { GpuMonitor } from '../../core/gpu/gpu-report.js';
import { testModelPath, waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';
import { startLoopbackHub, type LoopbackHub } from '../helpers/loopback-hub.js';
import { hostRelease, tarGz, type ReleaseHost } from '../helpers/release-host.js';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'manifold.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `manifold args` to its end (stdout and stderr are pipes: no terminal). */
function manifold(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const json = <T>(run: Run): T => {
  const lines = run.stdout.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
};

describe('manifold CLI', () => {
  let dir: string;
  let dataDir: string;
  let hub: LoopbackHub;
  let model: Buffer;
  let serve: ChildProcessByStdio<null, Readable, Readable>;
  let serveErr = '';
  let serveOut = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'manifold-cli-'));
    dataDir = join(dir, 'data');
    model = await readFile(testModelPath());
    hub = await startLoopbackHub([
      { path: 'test-org/tiny/tiny.gguf', bytes: model },
      { path: 'test-org/quant/quant-Q8_0.gguf', bytes: model },
      // ~2 s at this rate: a terminal sees the bar rewritten several times.
      { path: 'test-org/slow/slow.gguf', bytes: model, bytesPerSecond: 900_000 },
    ]);
    hub.manifest('test-org/quant:Q8_0', 'quant-Q8_0.gguf');
    serve = spawn(process.execPath, [bin, 'serve', '--idle', '--port', '0', '--data-dir', dataDir], {
      cwd: root,
      env: { ...process.env, HF_ENDPOINT: hub.endpoint },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    serve.stdout.on('data', (c: Buffer) => (serveOut += c.toString()));
    serve.stderr.on('data', (c: Buffer) => (serveErr += c.toString()));
    await waitFor(() => /OpenAI-compatible API: (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(serveOut)?.[1], `serve's URL (stderr: ${serveErr.slice(-500)})`, 120_000);
  }, 180_000);
  afterAll(async () => {
    if (serve && serve.exitCode === null) serve.kill('SIGKILL');
    await hub?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]): Promise<Run> => manifold([...args, '--data-dir', dataDir]);

  it('describes every command and its options with --help or -h, and refuses an unknown command saying where help is', async () => {
    for (const flag of ['--help', '-h']) {
      const help = await manifold([flag]);
      expect(help.code).toBe(0);
      for (const command of ['serve', 'pull <uri>', 'search', 'ls', 'ps', 'rm <name>', 'unload', 'engine'])
        expect(help.stdout).toMatch(new RegExp(`^  ${command.replace(/[<>]/g, '.')}\\s+\\S`, 'm'));
      expect(help.stdout).toContain('--data-dir <dir>');
    }
    const unknown = await manifold(['foo']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'foo'");
    expect(unknown.stderr).toContain('manifold --help');
    const serveHelp = await manifold(['serve', '--help']);
    expect(serveHelp.code).toBe(0);
    for (const option of ['--model <file>', '--replicas <n>', '--port <port>', '--shutdown-grace <ms>', '--verbose'])
      expect(serveHelp.stdout).toMatch(new RegExp(`${option}\\s+\\S`));
    const calibrate = await manifold(['engine', 'calibrate', '--help']);
    expect(calibrate.stdout).toMatch(/--threads <n>\s+threads per engine/);
  });

  it("search finds the Hub's GGUF repositories by words, and --files lists a repository's files with the URI each pulls by", async () => {
    const env = { HF_ENDPOINT: hub.endpoint };
    expect(json<{ models: { id: string }[] }>(await manifold(['search', 'quant', '--json'], env)).models.map((m) => m.id)).toEqual(['test-org/quant']);
    const files = await manifold(['search', '--files', 'test-org/quant'], env);
    expect(files.stdout.trim()).toBe('hf:test-org/quant/quant-Q8_0.gguf  1.8 MiB');
  });

  it('serve writes serve.json with its URL and token, readable by its owner only', async () => {
    const file = join(dataDir, 'serve.json');
    const written = JSON.parse(await readFile(file, 'utf8')) as { url: string; token: string; pid: number };
    expect(serveOut).toContain(`OpenAI-compatible API: ${written.url}/v1`);
    expect(serveOut).toContain(`token=${written.token}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('pull downloads through the serve: one JSON line with --json, a plain line without; serve logs it', async () => {
    const pulled = json<{ uri: string; path: string; bytes: number }>(await cli('pull', 'hf:test-org/tiny/tiny.gguf', '--json'));
    expect(pulled).toMatchObject({ uri: 'hf:test-org/tiny/tiny.gguf', path: join(dataDir, 'models', 'hf_test-org_tiny_tiny.gguf'), bytes: model.length });
    expect((await readFile(pulled.path)).equals(model)).toBe(true);
    expect(serveErr).toMatch(/download hf:test-org\/tiny\/tiny\.gguf: done, 1\.8 MiB in /);

    const plain = await cli('pull', 'hf:test-org/quant:Q8_0');
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^pulled hf:test-org\/quant:Q8_0: .*\.gguf \(1\.8 MiB\)\n$/);

    const refused = await cli('pull', 'hf:test-org/tiny/absent.gguf', '--json');
    expect(refused.code).toBe(1);
    expect(json<{ error: string }>(refused).error).toMatch(/cannot download hf:test-org\/tiny\/absent\.gguf: .*404/);
  });

  // A terminal through util-linux's `script` (a pseudo-terminal for stdout and stderr).
  if (!existsSync('/usr/bin/script'))
    console.log("skipped: the terminal pull test needs util-linux's /usr/bin/script; the plain and JSON pulls are tested above");
  it.skipIf(!existsSync('/usr/bin/script'))('pull on a terminal draws a progress bar rewritten in place, then the plain line', async () => {
    const command = [process.execPath, bin, 'pull', 'hf:test-org/slow/slow.gguf', '--data-dir', dataDir].map((a) => `'${a}'`).join(' ');
    const run = await new Promise<Run>((resolve) => {
      const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.on('exit', (code) => resolve({ code, stdout, stderr: '' }));
    });
    expect(run.code, run.stdout).toBe(0);
    const bars = run.stdout.match(/\r\[[#.]{30}\] +\d+% /g) ?? [];
    expect(bars.length, run.stdout).toBeGreaterThanOrEqual(2);
    expect(run.stdout).toMatch(/pulled hf:test-org\/slow\/slow\.gguf: .*\.gguf \(1\.8 MiB\)/);
    expect(json<{ deleted: string[] }>(await cli('rm', 'hf_test-org_slow_slow.gguf', '--json')).deleted).toHaveLength(1);
  });

  it('ls lists the models with metadata; ps shows replicas, slots and queue of the loaded model; rm refuses it until unload', async () => {
    const listed = json<{ models: { file: string; architecture: string; loaded: boolean; suggested: { replicas: number } | null }[] }>(
      await cli('ls', '--json'),
    );
    expect(listed.models.map((m) => m.file).sort()).toEqual(['hf_test-org_quant_quant.Q8_0.gguf', 'hf_test-org_tiny_tiny.gguf']);
    expect(listed.models.every((m) => m.architecture === 'llama' && !m.loaded && m.suggested !== null)).toBe(true);

    const { url, token } = JSON.parse(await readFile(join(dataDir, 'serve.json'), 'utf8')) as { url: string; token: string };
    const load = await fetch(`${url}/admin/load`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: join(dataDir, 'models', 'hf_test-org_tiny_tiny.gguf'), gpus: 'cpu', replicas: 1, contextSize: 1024, slots: 2 }),
    });
    expect(load.status, await load.clone().text()).toBe(200);
    // Another model over the one serving: refused unless the request says replace (the UI asks first).
    const other = join(dataDir, 'models', 'hf_test-org_quant_quant.Q8_0.gguf');
    const replace = await fetch(`${url}/admin/load`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: other, gpus: 'cpu', replicas: 1, contextSize: 1024, slots: 2 }),
    });
    expect(replace.status).toBe(400);
    expect(((await replace.json()) as { error: { message: string } }).error.message).toBe(
      `replace: ${join(dataDir, 'models', 'hf_test-org_tiny_tiny.gguf')} is loaded; loading ${other} would replace it (say replace: true, or unload first)`,
    );

    const text = await cli('ls');
    expect(text.stdout).toMatch(/^\* hf_test-org_tiny_tiny\.gguf {2}llama, [\d.]+ M params, F32, 1\.8 MiB, ctx 4096$/m);
    // A command answers without compiling TypeScript first: measured here (shared machines are noisy), bounded loosely.
    const started = performance.now();
    const psRun = await cli('ps', '--json');
    const psMs = performance.now() - started;
    console.log(`manifold ps answered in ${psMs.toFixed(0)} ms (the process from spawn to exit)`);
    expect(psMs).toBeLessThan(2000);
    const ps = json<{
      info: { status: string; model: string };
      replicas: { state: string; slots: number }[];
      slots: unknown[];
      queue: { waiting: number; running: number };
    }>(psRun);
    expect(ps.info).toMatchObject({ status: 'ok', model: 'hf_test-org_tiny_tiny' });
    expect(ps.replicas).toHaveLength(1);
    expect(ps.replicas[0]).toMatchObject({ state: 'ready', slots: 2 });
    expect(ps.slots).toHaveLength(2);
    expect(ps.queue).toMatchObject({ waiting: 0, running: 0 });

    const refused = await cli('rm', 'hf_test-org_tiny_tiny.gguf');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('hf_test-org_tiny_tiny.gguf is loaded: unload it first');

    expect(json<{ status: string }>(await cli('unload', '--json')).status).toBe('idle');
    expect(json<{ deleted: string[] }>(await cli('rm', 'hf_test-org_tiny_tiny.gguf', '--json')).deleted).toEqual([
      join(dataDir, 'models', 'hf_test-org_tiny_tiny.gguf'),
    ]);
  }, 120_000);

  it('serve removes serve.json on exit; ls and rm then work on the folder itself, and ps says no serve runs', async () => {
    serve.kill('SIGINT');
    expect(await new Promise((resolve) => serve.on('exit', resolve))).toBe(0);
    expect(existsSync(join(dataDir, 'serve.json'))).toBe(false);
    expect(json<{ models: { file: string }[] }>(await cli('ls', '--json')).models.map((m) => m.file)).toEqual(['hf_test-org_quant_quant.Q8_0.gguf']);
    expect(json<{ deleted: string[] }>(await cli('rm', 'hf_test-org_quant_quant.Q8_0.gguf', '--json')).deleted).toHaveLength(1);
    const ps = await cli('ps');
    expect(ps.code).toBe(1);
    expect(ps.stderr).toContain(`ps: no serve runs for ${dataDir}`);
  }, 60_000);

  it('engine install puts the release build where core looks, and refuses an unknown backend', async () => {
    const { tag, repo } = bundledLlamaRelease();
    // The installer runs the binary once (`--version`): a stand-in that answers as llama-server does.
    await mkdir(join(dir, 'pack', 'build', 'bin'), { recursive: true });
    await writeFile(join(dir, 'pack', 'build', 'bin', 'llama-server'), `#!/bin/sh\necho "version: 1 (${tag})"\n`, { mode: 0o755 });
    const host: ReleaseHost = await hostRelease(repo, tag, [{ name: `llama-${tag}-bin-ubuntu-x64.tar.gz`, bytes: await tarGz(join(dir, 'pack'), ['build']) }]);
    try {
      const cacheRoot = join(dir, 'engine-cache');
      const env = { MANIFOLD_GITHUB_API: host.apiBase, MANIFOLD_LLAMA_SERVER_CACHE: cacheRoot };
      const installed = json<{ backend: string; binary: string; tag: string }>(await manifold(['engine', 'install', '--backend', 'cpu', '--json'], env));
      expect(installed).toMatchObject({ backend: 'cpu', tag, binary: join(llamaServerCacheDir(cacheRoot), 'llama-server') });
      const bad = await manifold(['engine', 'install', '--backend', 'opencl'], env);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain("argument 'opencl' is invalid. Allowed choices are auto, cpu, vulkan, cuda, metal");
    } finally {
      await host.close();
    }
  }, 60_000);

  it('engine calibrate refuses where llama-server is not installed, saying how to install it', async () => {
    const refused = await manifold(['engine', 'calibrate', testModelPath(), '--data-dir', join(dir, 'uncalibrated')], {
      MANIFOLD_LLAMA_SERVER: '',
      MANIFOLD_LLAMA_SERVER_CACHE: join(dir, 'no-engine-here'),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'llama-server is not installed, so node-llama-cpp is the only engine kind here: install it with `manifold engine install` first',
    );
    expect(existsSync(join(dir, 'uncalibrated', CALIBRATION_FILE))).toBe(false);
  });

  it.skipIf(findLlamaServer() === null)(
    'engine calibrate measures both engine kinds on the model and keeps the faster; a serve without engine.kind then runs the kind its verdict names',
    async () => {
      // A data dir not made yet: calibrate makes it.
      const calibrated = join(dir, 'calibrated');
      const monitor = new GpuMonitor();
      const machine = thisMachine(monitor.detectedCards().length);
      monitor.close();
      const run = await manifold(['engine', 'calibrate', testModelPath(), '--threads', '1', '--json', '--data-dir', calibrated]);
      expect(run.code, run.stderr).toBe(0);
      const { path, ...verdict } = json<EngineCalibration & { path: string }>(run);
      expect(path).toBe(join(calibrated, CALIBRATION_FILE));
      for (const kind of ENGINE_KINDS) {
        expect(verdict.kinds[kind].prefillTokensPerSecond).toBeGreaterThan(0);
        expect(verdict.kinds[kind].decodeTokensPerSecond).toBeGreaterThan(0);
      }
      const slower = ENGINE_KINDS.find((kind) => kind !== verdict.faster)!;
      expect(verdict.kinds[verdict.faster].seconds).toBeLessThanOrEqual(verdict.kinds[slower].seconds);
      expect(verdict).toMatchObject({ machine, threads: 1, model: testModelPath() });
      expect(readCalibration(calibrated, machine)).toEqual({ calibration: verdict });

      // The suite pins the engine kind (MANIFOLD_ENGINE_KIND); unpinned, serve follows each verdict.
      const pinned = process.env.MANIFOLD_ENGINE_KIND;
      delete process.env.MANIFOLD_ENGINE_KIND;
      try {
        for (const faster of ENGINE_KINDS) {
          await writeCalibration(calibrated, { ...verdict, faster });
          const served = await startServed({ replicas: 1 }, { dataDir: calibrated });
          try {
            const pid = served.workstation.replicas.replicaView()[0]!.pid!;
            expect((await readFile(`/proc/${pid}/comm`, 'utf8')).trim()).toBe(faster === 'llama-server' ? 'llama-server' : 'node');
            expect(served.logs.some((line) => line.includes(`${faster} is the faster kind here`))).toBe(true);
          } finally {
            await served.close();
          }
        }
      } finally {
        if (pinned === undefined) delete process.env.MANIFOLD_ENGINE_KIND;
        else process.env.MANIFOLD_ENGINE_KIND = pinned;
      }
    },
    120_000,
  );
});
