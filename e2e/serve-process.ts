/**
 * `npm run serve` as the e2e specs run it: serve-cli in a child process with the spec's arguments, ready
 * when it prints its dashboard link (the one-time URL with the control token), stopped with SIGINT (its
 * graceful stop) and awaited.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

export interface ServeProcess {
  readonly child: ChildProcess;
  /** The dashboard link serve printed. */
  readonly dashboard: string;
}

/** Starts `serve-cli <args>` (with `env` added) and resolves with its dashboard link; rejects if it exits or prints none in 90 s. */
export async function startServe(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'electron', 'serve-cli.ts'), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  child.stderr!.on('data', () => {});
  let out = '';
  const dashboard = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no dashboard URL: ${out}`)), 90_000);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /Dashboard: +(http:\S+)/.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    });
  });
  return { child, dashboard };
}

/** Stops serve gracefully and waits for it to exit (nothing when it already has). */
export async function stopServe(served: ServeProcess | undefined): Promise<void> {
  if (!served || served.child.exitCode !== null || served.child.signalCode !== null) return;
  const exited = new Promise((resolve) => served.child.once('exit', resolve));
  served.child.kill('SIGINT');
  await exited;
}
