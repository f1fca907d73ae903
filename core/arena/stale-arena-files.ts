/**
 * The /dev/shm fallback's clean-up (DESIGN §6): arena files left by workstations that no longer run
 * (killed before they could remove theirs) are removed at start. Only this user's files are touched: the
 * uid in the name and the file's owner must both be ours, and the pid in the name must be dead.
 */
import { lstat, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '../process-alive.js';
import { SHM_ARENA_FILE } from './arena-plan.js';

/** Removes `dir`'s arena files of dead workstations of `uid`; returns the paths removed. */
export async function removeStaleArenaFiles(dir: string, uid: number, alive: (pid: number) => boolean = processAlive): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = SHM_ARENA_FILE.exec(name);
    if (!match || Number(match[1]) !== uid) continue;
    const path = join(dir, name);
    const stat = await lstat(path).catch(() => null);
    if (!stat?.isFile() || stat.uid !== uid || alive(Number(match[2]))) continue;
    await unlink(path).then(
      () => removed.push(path),
      () => {},
    );
  }
  return removed;
}
