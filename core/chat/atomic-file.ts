/**
 * Atomic file writes: the bytes go to a temporary file beside the target, are flushed to disk (fsync),
 * and renamed over the target, then the folder is flushed, so a reader sees the old file or the new one,
 * never a half-written one — unless the disk itself lies, which `conversation-store.ts` reports.
 * A process killed mid-write leaves its temporary file (`.<name>.<pid>-<hex>.tmp`); `sweepStaleTemps`
 * removes those of processes that are gone, and never a file that does not have that form.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { processAlive } from '../process-alive.js';

/** `.<target name>.<pid>-<12 hex>.tmp`; files written before the pid was part of the name have no `<pid>-`. */
const TEMP_NAME = /^\..+\.(?:(\d+)-)?[0-9a-f]{12}\.tmp$/;

/** A temporary file of a process still running is left alone unless it is this old (a write takes milliseconds). */
const ABANDONED_MS = 10 * 60_000;

export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  const file = await open(temporary, 'wx', 0o600);
  try {
    await file.writeFile(data, 'utf8');
    await file.sync();
  } catch (error) {
    await file.close();
    await unlink(temporary).catch(() => {});
    throw error;
  }
  await file.close();
  await rename(temporary, path);
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * Removes the temporary files of interrupted atomic writes in `dir`: those of a process that is gone, of
 * this process's pid (this runs before this process writes there: the pid was a previous process's),
 * without a pid (an older form), or abandoned for 10 minutes. Call it before writing in `dir`.
 * Returns the names removed.
 */
export async function sweepStaleTemps(dir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dir)) {
    const match = TEMP_NAME.exec(name);
    if (!match) continue;
    const pid = match[1] === undefined ? null : Number(match[1]);
    const path = join(dir, name);
    const stale =
      pid === null ||
      pid === process.pid ||
      !processAlive(pid) ||
      (await stat(path).then(
        (s) => Date.now() - s.mtimeMs > ABANDONED_MS,
        () => false,
      ));
    if (!stale) continue;
    await unlink(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    removed.push(name);
  }
  return removed;
}
