/** `npm run serve` as a user runs it: no arguments, the README's curl examples, then Ctrl-C stops everything. */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findLlamaServer } from '../../common/node/llama-server-binary.js';
import { serveCliArgv } from '../helpers/serve-child.js';
import { waitFor } from '../helpers/engines.js';
import { hostile, writeHostileModel } from '../helpers/hostile-models.js';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

describe('npm run serve', () => {
  it('serves the generated model with no arguments, answers the README’s curl commands, and exits cleanly on SIGINT', async () => {
    const dataHome = await mkdtemp(join(tmpdir(), 'manifold-xdg-'));
    const cli = spawn(process.execPath, serveCliArgv(['--port', '0']), {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, XDG_DATA_HOME: dataHome },
    });
    let out = '';
    let err = '';
    cli.stdout.on('data', (c: Buffer) => (out += c.toString()));
    cli.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => cli.on('exit', (code) => resolve(code)));
    const base = await waitFor(() => /OpenAI-compatible API: (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out)?.[1], 'the API URL', 60_000);
    // The dashboard line is the next write: it may reach this process in a later chunk.
    const token = await waitFor(
      () => /Dashboard: +http:\/\/127\.0\.0\.1:\d+\/\?token=([0-9a-f]{48})/.exec(out)?.[1],
      'the dashboard link with its token',
      10_000,
    );
    const port = new URL(base).port;

    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const block = /```sh\n(curl [\s\S]*?)```/.exec(readme)![1]!;
    const commands = block
      .replace(/\\\n\s*/g, '')
      .trim()
      .split('\n')
      .map((line) => line.replaceAll(':8080', `:${port}`));
    expect(commands.length).toBeGreaterThanOrEqual(4);
    const outputs = [];
    for (const command of commands) outputs.push((await run('bash', ['-c', `set -o pipefail; ${command}`], { env: { ...process.env, TOKEN: token } })).stdout);
    expect(JSON.parse(outputs[0]!)).toMatchObject({ object: 'chat.completion', usage: { completion_tokens: expect.any(Number) } });
    expect(JSON.parse(outputs[1]!)).toMatchObject({ status: 'ok', replicas: 2, replicas_alive: 2 });
    expect(outputs[2]).toMatch(/^manifold_requests_routed_total\{replica="0"\} \d+/m);
    expect(JSON.parse(outputs[3]!)).toMatchObject([
      { replica: 0, outcome: 'Applied', sizes: { contextSize: 2048 } },
      { replica: 1, outcome: 'Applied', sizes: { contextSize: 2048 } },
    ]);

    const pids = [...err.matchAll(/\[replica \d+ (\d+)\] ready/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    cli.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(err).toContain('exited: stopped');
  });
});

describe('npm run serve: the default engine kind', () => {
  /** Serves the generated model as one replica with `env`, and gives the executable its replica runs. */
  async function replicaExecutable(env: Record<string, string | undefined>): Promise<string> {
    const cli = spawn(process.execPath, serveCliArgv(['--port', '0', '--replicas', '1']), {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let out = '';
    let err = '';
    cli.stdout.on('data', (c: Buffer) => (out += c.toString()));
    cli.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => cli.on('exit', (code) => resolve(code)));
    try {
      // Serving (and handling Ctrl-C) once the API's URL is printed.
      await waitFor(() => out.includes('OpenAI-compatible API:') || undefined, 'the API URL', 90_000);
      const pid = /\[replica 0 (\d+)\] ready/.exec(err)?.[1];
      return await readlink(`/proc/${pid}/exe`);
    } finally {
      cli.kill('SIGINT');
      expect(await exited).toBe(0);
    }
  }

  it('runs llama-server where its binary is installed and node-llama-cpp where it is not, when the config names no kind', async () => {
    const binary = findLlamaServer();
    expect(binary, 'test/global-setup.ts builds llama-server').not.toBeNull();
    const { MANIFOLD_ENGINE_KIND: _pinnedForTheSuite, ...userEnv } = process.env;
    expect(await replicaExecutable(userEnv)).toBe(await realpath(binary!));
    expect(await replicaExecutable({ ...userEnv, MANIFOLD_LLAMA_SERVER: join(tmpdir(), 'no-such-llama-server') })).toBe(await realpath(process.execPath));
  }, 240_000);
});

describe('npm run serve with bad input', () => {
  const cli = (args: string[]) =>
    run(process.execPath, serveCliArgv(['--port', '0', ...args]), { cwd: root }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );

  it('exits 1 with a clear message for bad JSON, a config that breaks a rule, and a file that is not a model', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifold-cli-'));
    try {
      await writeFile(join(dir, 'bad.json'), '{"model": ');
      await writeFile(join(dir, 'uneven.json'), JSON.stringify({ model: join(dir, 'm.gguf'), gpu: [0, 1, 2, 3], replicas: 3 }));
      await writeFile(join(dir, 'm.gguf'), 'not a model');

      const badJson = await cli(['--config', join(dir, 'bad.json'), '--data-dir', dir]);
      expect(badJson.code).toBe(1);
      expect(badJson.stderr).toMatch(/config error: cannot read the config .*bad\.json: /);

      const uneven = await cli(['--config', join(dir, 'uneven.json'), '--data-dir', dir]);
      expect(uneven.code).toBe(1);
      expect(uneven.stderr).toContain('config error: replicas: 3 replicas cannot split the 4 cards [0, 1, 2, 3] into equal groups');

      const notModel = await cli(['--model', join(dir, 'm.gguf'), '--data-dir', dir]);
      expect(notModel.code).toBe(1);
      expect(notModel.stderr).toContain('not a GGUF file');
      // The failure outlives the process, in the data dir's log.
      const logged = (await readFile(join(dir, 'logs', 'manifold.log'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { level: string; msg: string });
      expect(logged.find((l) => l.msg.startsWith('start failed: ') && l.msg.includes('not a GGUF file'))?.level).toBe('error');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 1 naming the problem for hostile hyper-parameters, never with a native abort', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'manifold-cli-'));
    try {
      for (const name of ['layers-600', 'heads-0', 'experts-0-used-4']) {
        const model = hostile(name);
        const path = await writeHostileModel(dir, model);
        const result = await cli(['--model', path]);
        expect(result.code, name).toBe(1);
        expect(result.stderr).toMatch(new RegExp(`manifold serve failed: ${path} failed validation: ${model.problem!.source}`));
      }
      // Within the bounds, but the weights do not match: the tokenizer child's probe refuses it.
      const probeOnly = await writeHostileModel(dir, hostile('feed-forward-512'));
      const result = await cli(['--model', probeOnly]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`manifold serve failed: ${probeOnly} failed validation: the weights do not load: `));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 300_000); // four starts of the CLI (and one tokenizer child): slow on a busy machine
});
