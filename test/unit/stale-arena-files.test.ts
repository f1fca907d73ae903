/** The /dev/shm fallback's sweep: dead workstations' files of this user go, everything else stays. */
import { chownSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeStaleArenaFiles } from '../../core/arena/stale-arena-files.js';
import { processAlive } from '../../core/process-alive.js';

/** Above Linux's PID_MAX_LIMIT (2^22): no process can have it. */
const DEAD_PID = 4_194_305;
const uid = process.getuid?.() ?? 0;
const OTHER_UID = uid + 4242;

describe('removeStaleArenaFiles', () => {
  it("removes this user's files of dead pids, keeps live pids, other users' files and other names", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifold-shm-'));
    const file = (name: string): string => {
      writeFileSync(join(dir, name), 'GGUF');
      return join(dir, name);
    };
    const stale = file(`manifold-${uid}-${DEAD_PID}.bin`);
    const live = file(`manifold-${uid}-${process.pid}.bin`);
    const othersByName = file(`manifold-${OTHER_UID}-${DEAD_PID}.bin`);
    const unrelated = file(`manifold-${uid}-${DEAD_PID}.bin.bak`);
    // A file under our uid's name but owned by someone else (only root can make one): never ours to remove.
    const othersByOwner = file(`manifold-${uid}-${DEAD_PID + 1}.bin`);
    let chowned = true;
    try {
      chownSync(othersByName, OTHER_UID, OTHER_UID);
      chownSync(othersByOwner, OTHER_UID, OTHER_UID);
    } catch {
      chowned = false;
      console.log('note: not root, so the other-owner file is ours and only the name rule is tested');
    }
    expect(processAlive(DEAD_PID)).toBe(false);
    expect(processAlive(process.pid)).toBe(true);

    const removed = await removeStaleArenaFiles(dir, uid);
    expect(removed).toEqual(chowned ? [stale] : [stale, othersByOwner].sort());
    expect(existsSync(stale)).toBe(false);
    for (const kept of [live, othersByName, unrelated]) expect(readFileSync(kept, 'utf8')).toBe('GGUF');
    if (chowned) expect(existsSync(othersByOwner)).toBe(true);
  });

  it('finds nothing to do in a folder that does not exist', async () => {
    expect(await removeStaleArenaFiles('/nonexistent/manifold-shm', uid)).toEqual([]);
  });
});
