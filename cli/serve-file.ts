/**
 * `<dataDir>/serve.json`: how the `manifold` CLI finds a running `serve` (its URL and control token).
 * serve writes it (mode 0600: the token is a secret) once it listens and removes it on exit; a file whose
 * process is gone is stale and ignored.
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '../core/process-alive.js';

export interface ServeFile {
  url: string;
  token: string;
  pid: number;
}

const serveFilePath = (dataDir: string): string => join(dataDir, 'serve.json');

/** Writes the file and removes it when this process exits. */
export async function writeServeFile(dataDir: string, serve: Omit<ServeFile, 'pid'>): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await writeFile(serveFilePath(dataDir), JSON.stringify({ ...serve, pid: process.pid }), { mode: 0o600 });
  process.on('exit', () => removeServeFile(dataDir));
}

function removeServeFile(dataDir: string): void {
  try {
    const file = readServeFile(dataDir);
    if (file?.pid === process.pid) rmSync(serveFilePath(dataDir), { force: true });
  } catch {
    // Gone already.
  }
}

/** The running serve of `dataDir`, or null when none runs there. */
export function readServeFile(dataDir: string): ServeFile | null {
  let parsed: Partial<ServeFile>;
  try {
    parsed = JSON.parse(readFileSync(serveFilePath(dataDir), 'utf8')) as Partial<ServeFile>;
  } catch {
    return null;
  }
  const { url, token, pid } = parsed;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url) || typeof token !== 'string' || !Number.isInteger(pid)) return null;
  return processAlive(pid!) ? { url, token, pid: pid! } : null;
}
