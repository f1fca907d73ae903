/**
 * How core starts an engine child. The shell injects the spawn function: `child_process.fork` under plain
 * Node (tests, `npm run serve`), Electron's `utilityProcess` in the desktop app. Core sees only
 * `EngineProcess`, a process with a message channel.
 */
import { fork } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Why Electron says a utility process is gone (app's `child-process-gone`); plain Node says only code and signal. */
export type EngineGoneReason = 'clean-exit' | 'abnormal-exit' | 'killed' | 'crashed' | 'oom' | 'launch-failed' | 'integrity-failure' | 'memory-eviction';

export type EngineExit = { code: number | null; signal: NodeJS.Signals | null; reason?: EngineGoneReason };

export interface EngineProcess {
  readonly pid: number | undefined;
  send(message: unknown): boolean;
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (exit: EngineExit) => void): void;
  /** Lines the child writes to stdout/stderr. */
  onLog(listener: (line: string) => void): void;
  kill(signal?: NodeJS.Signals): void;
}

export interface SpawnEngineOptions {
  /** Extra environment (card visibility, per-replica env) merged over the parent's. */
  env?: Record<string, string>;
}

export type SpawnEngine = (options: SpawnEngineOptions) => EngineProcess;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The engine entry and the Node flags to run it: the TypeScript source through tsx's loader. */
export function engineEntry(): { path: string; execArgv: string[] } {
  const tsxLoader = pathToFileURL(join(repoRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  return { path: join(repoRoot, 'engine-bin', 'main.ts'), execArgv: ['--import', tsxLoader] };
}

/** Splits a child's output stream into lines for `listeners` (both spawns use it). */
export function forwardLines(stream: NodeJS.ReadableStream | null, listeners: ((line: string) => void)[]): void {
  if (!stream) return;
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) for (const listener of listeners) listener(line);
  });
  stream.on('end', () => {
    if (rest) for (const listener of listeners) listener(rest);
  });
}

/** Spawns an engine with `child_process.fork` (the plain-Node spawn). */
export const forkEngine: SpawnEngine = (options) => {
  const entry = engineEntry();
  const child = fork(entry.path, [], {
    execArgv: entry.execArgv,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const logListeners: ((line: string) => void)[] = [];
  forwardLines(child.stdout, logListeners);
  forwardLines(child.stderr, logListeners);
  child.on('error', (error) => {
    for (const listener of logListeners) listener(`spawn error: ${error.message}`);
  });
  return {
    get pid() {
      return child.pid;
    },
    send: (message) => {
      if (!child.connected) return false;
      child.send(message as object, (error) => {
        if (error) for (const listener of logListeners) listener(`send failed: ${error.message}`);
      });
      return true;
    },
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => child.on('exit', (code, signal) => listener({ code, signal })),
    onLog: (listener) => logListeners.push(listener),
    kill: (signal) => {
      child.kill(signal);
    },
  };
};
