/**
 * node-llama-cpp driven in-process, in a plain process of its own (`bench/plain-process-child.ts`, forked
 * with this process's loader flags): the `overhead` benchmark's baseline. A fresh one starts beside each
 * fresh replica, so the baseline runs in a process like the engine child, not in the benchmark's own
 * (which has loaded and run everything else), and no one process sets every pair: a process here may run
 * the same decode 10–23% slower than another for its whole life (session 18: three engine children of 24,
 * every one of their pairs; session 17: a forked plain child against its parent, 86.8–103.1%).
 * Each stream's timings are taken inside that process, so the IPC that commands it costs them nothing.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { hasExited, stopChild } from './child-stop.js';
import type { InProcessStream } from './in-process.js';

export interface PlainProcessOptions {
  model: string;
  threads: number;
  contextSize: number;
}

/** What the child answers: ready once its context is made, then one result (or error) per stream asked. */
export type PlainProcessReply = { type: 'ready' } | { type: 'streamed'; stream: InProcessStream } | { type: 'failed'; message: string };

/** What the child is asked: one greedy stream of `answerTokens` tokens after a cleared `prompt`. */
export interface PlainProcessStreamRequest {
  prompt: number[];
  answerTokens: number;
}

export interface PlainProcess {
  readonly pid: number;
  stream(prompt: readonly number[], answerTokens: number): Promise<InProcessStream>;
  close(): Promise<void>;
}

const isReply = (message: unknown): message is PlainProcessReply =>
  typeof message === 'object' && message !== null && ['ready', 'streamed', 'failed'].includes((message as { type?: unknown }).type as string);

/** The next reply of `child`, or its exit (also one before the call) or a failed channel as an error. */
function nextReply(child: ChildProcess): Promise<PlainProcessReply> {
  return new Promise((resolve, reject) => {
    if (hasExited(child) || !child.connected)
      return reject(new Error(`the plain node-llama-cpp process is gone (code ${child.exitCode}, signal ${child.signalCode})`));
    const onMessage = (message: unknown): void => {
      cleanUp();
      if (isReply(message)) resolve(message);
      else reject(new Error(`the plain node-llama-cpp process sent ${JSON.stringify(message)}`));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      cleanUp();
      reject(new Error(`the plain node-llama-cpp process exited (code ${code}, signal ${signal})`));
    };
    const onError = (error: Error): void => {
      cleanUp();
      reject(new Error(`the plain node-llama-cpp process's channel failed: ${error.message}`));
    };
    const cleanUp = (): void => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onError);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}

/** How long the child may take to load the model. */
const START_TIMEOUT_MS = 120_000;

export async function startPlainProcess(options: PlainProcessOptions): Promise<PlainProcess> {
  const child = fork(fileURLToPath(new URL('./plain-process-child.ts', import.meta.url)), [JSON.stringify(options)], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // A send that fails is reported by the reply it was waiting for; this keeps it from being uncaught.
  child.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the plain node-llama-cpp process was not ready within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
  });
  const ready = await Promise.race([nextReply(child), timedOut])
    .catch((error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    })
    .finally(() => clearTimeout(timer));
  if (ready.type !== 'ready') {
    child.kill();
    throw new Error(`the plain node-llama-cpp process did not start: ${ready.type === 'failed' ? ready.message : ready.type}`);
  }
  return {
    pid: child.pid!,
    async stream(prompt, answerTokens) {
      const reply = nextReply(child);
      child.send({ prompt: [...prompt], answerTokens } satisfies PlainProcessStreamRequest);
      const answer = await reply;
      if (answer.type !== 'streamed')
        throw new Error(`the plain node-llama-cpp process failed a stream: ${answer.type === 'failed' ? answer.message : answer.type}`);
      return answer.stream;
    },
    close: () => stopChild(child),
  };
}
