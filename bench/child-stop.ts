/** Ending a child process a benchmark started: SIGTERM, then SIGKILL once a grace period has passed; done when it has exited. */
import type { ChildProcess } from 'node:child_process';

export const hasExited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
