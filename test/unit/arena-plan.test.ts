/** The arena's platform decision, every branch, and the RAM warning (pure logic, no engine). */
import { describe, expect, it } from 'vitest';
import { ARENA_HEADROOM_BYTES, arenaRamWarning, planArena, shmArenaFileName, type ArenaFacts } from '../../core/arena/arena-plan.js';

const GiB = 1024 ** 3;
const linux: ArenaFacts = {
  requested: true,
  platform: 'linux',
  pid: 4242,
  uid: 1000,
  modelPath: '/models/llama-8b-q4.gguf',
  modelBytes: 5 * GiB,
  availableRamBytes: 20 * GiB,
  memfdAvailable: true,
  shmDir: '/dev/shm',
  shmFreeBytes: 12 * GiB,
};

describe('planArena', () => {
  it('uses a memfd on Linux when memfd_create works and RAM suffices', () => {
    expect(planArena(linux)).toEqual({ kind: 'memfd', name: 'manifold-model' });
  });

  it('falls back to a /dev/shm file named with the uid and pid when there is no memfd', () => {
    expect(planArena({ ...linux, memfdAvailable: false })).toEqual({ kind: 'shm-file', path: '/dev/shm/manifold-1000-4242.bin' });
    expect(shmArenaFileName(1000, 4242)).toBe('manifold-1000-4242.bin');
  });

  it('has no arena when neither memfd nor enough /dev/shm exists, and says which', () => {
    const small = planArena({ ...linux, memfdAvailable: false, shmFreeBytes: 2 * GiB });
    expect(small).toMatchObject({ kind: 'none' });
    expect('reason' in small && small.reason).toMatch(/memfd_create is not available and \/dev\/shm has 2\.0 GiB free for a 5\.0 GiB model/);
    const missing = planArena({ ...linux, memfdAvailable: false, shmFreeBytes: null });
    expect('reason' in missing && missing.reason).toMatch(/\/dev\/shm does not exist/);
  });

  it('has no arena when free RAM is below the model plus headroom, naming both figures', () => {
    const plan = planArena({ ...linux, availableRamBytes: 5 * GiB + ARENA_HEADROOM_BYTES - 1 });
    expect(plan.kind).toBe('none');
    expect('reason' in plan && plan.reason).toMatch(/not enough free RAM for the arena: it needs 5\.5 GiB .*, 5\.5 GiB is available/);
    expect(planArena({ ...linux, availableRamBytes: 5 * GiB + ARENA_HEADROOM_BYTES }).kind).toBe('memfd');
  });

  it('uses a named section Local\\manifold-<pid> on Windows', () => {
    expect(planArena({ ...linux, platform: 'win32', memfdAvailable: false, shmFreeBytes: null })).toEqual({
      kind: 'windows-section',
      name: 'Local\\manifold-4242',
    });
  });

  it('has none on macOS and other platforms, in one line', () => {
    const plan = planArena({ ...linux, platform: 'darwin', memfdAvailable: false });
    expect(plan).toEqual({ kind: 'none', reason: 'no shared arena on darwin; each replica maps the model file, and the page cache shares it' });
    expect(planArena({ ...linux, platform: 'freebsd' }).kind).toBe('none');
  });

  it('has none when not requested, or for a split model (incompatible with one arena file)', () => {
    expect(planArena({ ...linux, requested: false })).toMatchObject({ kind: 'none', reason: expect.stringMatching(/shared_arena is off/) });
    expect(planArena({ ...linux, modelPath: '/m/big-00001-of-00003.gguf' })).toMatchObject({ kind: 'none', reason: expect.stringMatching(/split into parts/) });
    expect(planArena({ ...linux, platform: 'win32', modelPath: '/m/big-00002-of-00003.GGUF' }).kind).toBe('none');
  });
});

describe('arenaRamWarning', () => {
  it('warns, never refuses, when the arena plus the engines would not fit free RAM', () => {
    expect(arenaRamWarning({ arenaBytes: 5 * GiB, engines: 4, enginePrivateBytes: GiB, availableRamBytes: 9 * GiB })).toBeNull();
    const warning = arenaRamWarning({ arenaBytes: 5 * GiB, engines: 4, enginePrivateBytes: GiB, availableRamBytes: 9 * GiB - 1 });
    expect(warning).toMatch(/^RAM: the arena \(5\.0 GiB\) plus 4 engines' private memory \(~1\.0 GiB each\) need 9\.0 GiB, but 9\.0 GiB is available/);
  });
});
