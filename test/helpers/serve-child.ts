/** Test helper: `npm run serve` as a child process (the CLI itself, through tsx), its output collected. */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { tsxExecArgv } from './tsx.js';
import { waitFor } from './wait-for.js';

const root = join(import.meta.dirname, '..', '..');

export interface ServeChild {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Everything printed so far. */
  readonly out: string;
  readonly err: string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** The API's base URL (`http://127.0.0.1:<port>`), once it is printed. */
  base(): Promise<string>;
  /** The control token, once it is printed. */
  token(): Promise<string>;
  /** The dashboard link (with the token), once it is printed. */
  dashboard(): Promise<string>;
  /** The engine pids, from the replicas' `ready` log lines (waits for `count`). */
  enginePids(count: number): Promise<number[]>;
}

/** Node's arguments that run `cli/serve-command.ts` from the source with `args`. */
export const serveCliArgv = (args: readonly string[]): string[] => [...tsxExecArgv(), join(root, 'cli', 'serve-command.ts'), ...args];

/**
 * Starts `cli/serve-command.ts` with `args`; `asTyped`: as a user types it, `npm run serve -- …`, in a
 * process group of its own as a terminal's foreground job (its pid is the group's).
 */
export function startServeChild(args: string[], env: Record<string, string> = {}, asTyped = false): ServeChild {
  const options = { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } };
  const child = asTyped ? spawn('npm', ['run', 'serve', '--', ...args], { ...options, detached: true }) : spawn(process.execPath, serveCliArgv(args), options);
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    get out() {
      return out;
    },
    get err() {
      return err;
    },
    exited,
    base: () => waitFor(() => /OpenAI-compatible API: (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(out)?.[1], `the API URL (stderr: ${err.slice(-500)})`, 120_000),
    dashboard: () => waitFor(() => /Dashboard: +(http:\S+)/.exec(out)?.[1], `the dashboard link (stderr: ${err.slice(-500)})`, 120_000),
    token: () => waitFor(() => /Dashboard: +http:\/\/127\.0\.0\.1:\d+\/\?token=([0-9a-f]{48})/.exec(out)?.[1], 'the control token', 120_000),
    enginePids: (count) =>
      waitFor(
        () => {
          const pids = [...err.matchAll(/\[replica \d+ (\d+)\] ready/g)].map((m) => Number(m[1]));
          return pids.length >= count ? pids : undefined;
        },
        `${count} engines ready`,
        120_000,
      ),
  };
}
