/**
 * A real llama.cpp `llama-server` on loopback, for the benchmarks and the integration tests that put
 * Manifold in front of remote replicas: the binary `build/llama-server.ts` builds from node-llama-cpp's
 * bundled source, started on a free port with S slots of `contextSize` tokens each, ready once its
 * /health answers 200. `stop()` ends it (SIGTERM, then SIGKILL); `kill()` is the fault a test injects.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ensureLlamaServer } from '../build/llama-server.js';
import { hasExited, stopChild } from './child-stop.js';
import { freeLoopbackPort } from '../core/llama-server/llama-server-folder.js';

export interface LlamaServerNodeOptions {
  model: string;
  slots: number;
  /** Tokens per slot. */
  contextSize: number;
  threads: number;
  /** A port to listen on (a test restarts a killed node on its old port); a free one otherwise. */
  port?: number;
  /** How long the model may take to load. */
  readyTimeoutMs?: number;
  /** Its host-memory prompt cache (`--cache-ram`, MiB; 0 turns it off); llama.cpp's default when absent. */
  cacheRamMib?: number;
  /** Its flash attention (`-fa`); llama.cpp's default (`auto`) when absent. */
  flashAttention?: 'on' | 'off' | 'auto';
}

export interface LlamaServerNode {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** Its last lines of output (for a failure's message). */
  readonly output: string[];
  kill(): void;
  stop(): Promise<void>;
}

export async function startLlamaServerNode(options: LlamaServerNodeOptions): Promise<LlamaServerNode> {
  const binary = await ensureLlamaServer();
  const port = options.port ?? (await freeLoopbackPort());
  const url = `http://127.0.0.1:${port}`;
  const args = ['-m', options.model, '--host', '127.0.0.1', '--port', String(port), '-np', String(options.slots)];
  args.push('-c', String(options.slots * options.contextSize), '-t', String(options.threads), '--no-webui', '--no-kv-unified');
  if (options.cacheRamMib !== undefined) args.push('--cache-ram', String(options.cacheRamMib));
  if (options.flashAttention !== undefined) args.push('-fa', options.flashAttention);
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer): void => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    output.splice(0, Math.max(0, output.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const node: LlamaServerNode = {
    url,
    port,
    process: child,
    output,
    kill: () => {
      child.kill('SIGKILL');
    },
    stop: () => stopChild(child),
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
  for (;;) {
    if (hasExited(child)) throw new Error(`llama-server exited before it was ready:\n${output.join('\n')}`);
    const health = await fetch(`${url}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (health === 200) return node;
    if (Date.now() > deadline) {
      await node.stop();
      throw new Error(`llama-server was not ready within ${options.readyTimeoutMs ?? 120_000} ms:\n${output.join('\n')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
