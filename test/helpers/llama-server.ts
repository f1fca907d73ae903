/**
 * Test helper: real llama.cpp `llama-server` processes (the binary build/llama-server.ts builds from the
 * llama.cpp node-llama-cpp ships) on loopback ports, as remote replicas. Each is stopped after its test file.
 *
 * The test models are random, so they emit lone bytes of the byte-fallback vocabulary, and this
 * llama-server's output parser (common_chat_parse, run on /completion too) fails the whole request with a
 * 500 on text that is not UTF-8. The helper bans the 256 byte tokens (`--logit-bias ID-inf`), which a real
 * model would not need: the generated text is then whole pieces and every request completes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { ensureLlamaServer } from '../../build/llama-server.js';
import { buildVocabulary } from '../../build/test-model.js';
import { GgufTokenType } from '../../common/gguf/format.js';
import { testModelPath, waitFor } from './engines.js';

export interface LlamaServer {
  readonly url: string;
  readonly port: number;
  /** Its stdout and stderr lines. */
  readonly logs: string[];
  /** The running process; undefined while stopped. */
  readonly process: ChildProcess | undefined;
  /** Starts it again on the same port (after `kill`), resolving when /health answers 200. */
  restart(): Promise<void>;
  /** Sends a signal and waits for the exit (SIGKILL stands in for a crash). */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const running: LlamaServer[] = [];
afterAll(async () => {
  await Promise.all(running.map((server) => server.kill('SIGKILL')));
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const byteTokenBans = (): string[] =>
  buildVocabulary().types.flatMap((type, id) => (type === GgufTokenType.BYTE ? ['--logit-bias', `${id}-inf`] : []));

export interface LlamaServerOptions {
  /** The GGUF to serve; the tiny test model by default. */
  model?: string;
  /** Slots (`-np`). */
  slots?: number;
  /** Tokens of context for all slots together (`-c`); each slot holds contextSize / slots. */
  contextSize?: number;
}

/** Starts a llama-server and resolves when its /health answers 200. */
export async function startLlamaServer(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  const binary = await ensureLlamaServer();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logs: string[] = [];
  const args = [
    '-m', options.model ?? testModelPath(),
    '--host', '127.0.0.1', '--port', String(port),
    '-np', String(options.slots ?? 2), '-c', String(options.contextSize ?? 2048),
    '-t', '1', '--no-webui', '--no-warmup',
    ...byteTokenBans(),
  ];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const launch = async (): Promise<void> => {
    const started = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    for (const stream of [started.stdout, started.stderr]) stream?.on('data', (data: Buffer) => logs.push(...data.toString().split('\n').filter(Boolean)));
    await waitFor(
      async () => {
        if (started.exitCode !== null) throw new Error(`llama-server exited with ${started.exitCode}: ${logs.slice(-5).join(' | ')}`);
        const status = await fetch(`${url}/health`).then((r) => r.status, () => 0);
        return status === 200 ? true : undefined;
      },
      `llama-server on ${url} to answer /health`,
      60_000,
    );
  };

  const server: LlamaServer = {
    url,
    port,
    logs,
    get process() {
      return child;
    },
    restart: launch,
    kill: async (signal = 'SIGTERM') => {
      const current = child;
      if (!current || current.exitCode !== null || current.signalCode !== null) return;
      current.kill(signal);
      await exited;
      child = undefined;
    },
  };
  running.push(server);
  await launch();
  return server;
}
