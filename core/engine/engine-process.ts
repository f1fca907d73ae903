/**
 * How core starts its children, the engines and the tokenizer (both entries of engine-bin/). The shell
 * injects the spawn functions: `child_process.fork` under plain Node (tests, `npm run serve`), Electron's
 * `utilityProcess` in the desktop app. Core sees only `EngineProcess`, a process with a message channel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { bundleChild, type ChildEntry } from '../../common/node/child-bundle.js';
import { repoRootFrom } from '../../common/node/repo-root.js';

export type { ChildEntry };

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
/** Starts a tokenizer child: the same shape as an engine's spawn, another entry. */
export type SpawnTokenizer = SpawnEngine;

const repoRoot = repoRootFrom(import.meta.url, 2);

/**
 * Where core's children run: on POSIX, each in its own process group, so the terminal's Ctrl-C (sent to
 * the whole foreground group) reaches only the parent, which drains and then stops them itself. Since
 * the terminal no longer takes them down with it, the ones still running when the parent exits (an
 * uncaught error, `process.exit`) are killed then; only a SIGKILL of the parent can leave one behind.
 */
export const OWN_GROUP = { detached: process.platform !== 'win32' } as const;

const running = new Set<ChildProcess>();
let killOnExit = false;

/** Counts `child` among those killed when this process exits. */
export function ownChild<T extends ChildProcess>(child: T): T {
  if (!killOnExit) {
    killOnExit = true;
    process.once('exit', () => {
      for (const left of running) left.kill('SIGKILL');
    });
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
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

/** The plain-Node spawn of `name`: `child_process.fork` of its bundle, made from the source at the first spawn. */
export function forkChild(name: ChildEntry): SpawnEngine {
  return (options) => {
    const bundle = bundleChild(name, repoRoot, join(repoRoot, '.cache', 'engine-bin'));
    const child = ownChild(
      fork(bundle, [], {
        execArgv: ['--enable-source-maps'],
        env: { ...process.env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        ...OWN_GROUP,
      }),
    );
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
      // 'close' comes after the child's output is read to the end, so its last words (an assert) are logged first.
      onExit: (listener) => child.on('close', (code, signal) => listener({ code, signal })),
      onLog: (listener) => logListeners.push(listener),
      kill: (signal) => {
        child.kill(signal);
      },
    };
  };
}

export const forkEngine: SpawnEngine = forkChild('main');
export const forkTokenizer: SpawnTokenizer = forkChild('tokenizer-main');
