/**
 * `npm run serve` as the e2e specs run it: the tests' serve child (test/helpers/serve-child.ts) with the
 * spec's arguments, ready when it prints its dashboard link (the one-time URL with the control token),
 * stopped with SIGINT (its graceful stop) and awaited.
 */
import type { ChildProcess } from 'node:child_process';
import { startServeChild } from '../test/helpers/serve-child.js';

export interface ServeProcess {
  readonly child: ChildProcess;
  /** The dashboard link serve printed. */
  readonly dashboard: string;
}

/** Starts `serve-command <args>` (with `env` added) and resolves with its dashboard link; rejects if it exits first. */
export async function startServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const served = startServeChild([...args], env);
  const exitedFirst = served.exited.then((code) => Promise.reject(new Error(`serve exited ${code}: ${served.out}${served.err.slice(-2000)}`)));
  const dashboard = await Promise.race([served.dashboard(), exitedFirst]);
  return { child: served.child, dashboard };
}

/** Stops serve gracefully and waits for it to exit (nothing when it already has). */
export async function stopServe(served: ServeProcess | undefined): Promise<void> {
  if (!served || served.child.exitCode !== null || served.child.signalCode !== null) return;
  const exited = new Promise((resolve) => served.child.once('exit', resolve));
  served.child.kill('SIGINT');
  await exited;
}
