/**
 * The shared arena with real engines (DESIGN §6): the weights read into a memfd once, every replica
 * loading them from `/proc/<main pid>/fd/<n>`; the model file deleted after start and a killed replica
 * still heals (and a weights rebuild, and a killed tokenizer child, still reload) from RAM; the weights
 * counted once in the processes' PSS; the /dev/shm fallback with its sweep; no arena (and the log line)
 * when RAM is short; a file that is not a GGUF refused with a clear error before any arena is filled.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTestModel } from '../../build/test-model.js';
import { rebuildRequestSchema } from '../../common/rebuild.js';
import { ARENA_HEADROOM_BYTES } from '../../core/arena/arena-plan.js';
import { ModelArena } from '../../core/arena/model-arena.js';
import { testModelPath, waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';
import { engineOf } from '../helpers/replica-sets.js';

const why = process.platform === 'linux' ? null : `the memfd arena and /proc are Linux's (this is ${process.platform}); the plan's unit tests cover the rest`;
if (why) console.log(`skipped: ${why}`);

/** A private copy of a generated model, so a test may delete it. */
function modelCopy(source: string): { dir: string; path: string; sha256: string } {
  const dir = mkdtempSync(join(tmpdir(), 'manifold-arena-'));
  const path = join(dir, 'model.gguf');
  copyFileSync(source, path);
  return { dir, path, sha256: createHash('sha256').update(readFileSync(path)).digest('hex') };
}

/** A `KEY: N kB` figure of /proc/<pid>/smaps_rollup, in bytes. */
async function rollup(pid: number, key: string): Promise<number> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const line = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text);
  if (!line) throw new Error(`no ${key} in /proc/${pid}/smaps_rollup`);
  return Number(line[1]) * 1024;
}

/** This process's fds that are arena memfds. */
async function arenaFds(): Promise<string[]> {
  const links = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return links.filter((l) => l.startsWith('/memfd:manifold-model'));
}

const mapsArena = async (pid: number): Promise<boolean> => (await readFile(`/proc/${pid}/maps`, 'utf8')).includes('/memfd:manifold-model');

describe.skipIf(why !== null)('shared arena', () => {
  it('serves from a memfd; with the model file deleted, a killed replica heals and a weights rebuild reloads from RAM', async () => {
    const model = modelCopy(testModelPath());
    const served = await startServed({ model: model.path, shared_arena: true, heal: { cooldownMs: 300 } });
    const { workstation } = served;
    const arena = workstation.arenaStatus();
    expect(arena).toMatchObject({ state: 'ready', kind: 'memfd', reason: null, modelBytes: statSync(model.path).size, sha256: model.sha256 });
    const fd = /^\/proc\/(\d+)\/fd\/(\d+)$/.exec(arena.enginePath!);
    expect(Number(fd?.[1])).toBe(process.pid);
    expect(await readlink(arena.enginePath!)).toBe('/memfd:manifold-model (deleted)');
    expect(served.logs.some((l) => /^arena: ready, memfd at \/proc\/\d+\/fd\/\d+, .* sha256 [0-9a-f]{16}…$/.test(l))).toBe(true);
    expect(served.logs.filter((l) => /^arena: (25|50|75|100)% /.test(l))).toHaveLength(4);
    for (const view of workstation.replicas.replicaView()) {
      expect(engineOf(workstation.replicas, view.replica).loadOptions.modelPath).toBe(arena.enginePath);
      expect(await mapsArena(view.pid!)).toBe(true);
    }

    rmSync(model.dir, { recursive: true });
    expect(existsSync(model.path)).toBe(false);
    const oldPid = workstation.replicas.replicaView()[0]!.pid;
    engineOf(workstation.replicas, 0).signal('SIGKILL');
    const healed = await waitFor(
      () => {
        const view = workstation.replicas.replicaView()[0]!;
        return view.state === 'ready' && view.pid !== oldPid ? view : undefined;
      },
      'replica 0 to heal',
      30_000,
    );
    expect(served.logs.some((l) => l.startsWith('[replica 0] healing in'))).toBe(true);
    expect(healed.pid).not.toBe(oldPid);
    expect(await mapsArena(healed.pid!)).toBe(true);
    const answer = await engineOf(workstation.replicas, 0).client!.generate({ tokens: [300, 301, 302, 303], maxTokens: 3, ignoreEos: true }).done;
    expect(answer.completionTokens).toHaveLength(3);
    // The tokenizer child too: killed with the file gone, it reopens the model from the arena.
    // (Whether a call in flight at the kill fails or waits for the restart is the tokenizer test's subject.)
    const tokenizerPid = workstation.tokenizer.pid;
    const openedBefore = served.logs.filter((l) => l.includes(`opening ${arena.enginePath}`)).length;
    workstation.tokenizer.signal('SIGKILL');
    await waitFor(
      () => (served.logs.filter((l) => l.includes(`opening ${arena.enginePath}`)).length > openedBefore ? true : undefined),
      'the tokenizer to reopen from the arena',
      60_000,
    );
    expect((await workstation.tokenizer.applyChatTemplate([{ role: 'user', content: 'hello' }])).tokens.length).toBeGreaterThan(3);
    expect(workstation.tokenizer.pid).not.toBe(tokenizerPid);

    const [rebuilt] = await workstation.rebuild(rebuildRequestSchema.parse({ replica: 1, change: { gpuLayers: 0 } }));
    expect(rebuilt).toMatchObject({ replica: 1, outcome: 'Applied' });
    expect(workstation.replicas.readyInfo(1)!.modelLoads).toBe(2);

    await served.close();
    expect(await arenaFds()).toEqual([]);
  });

  it('counts the weights once in the PSS of the workstation and its 3 replicas', async () => {
    const modelPath = await ensureTestModel('small');
    const modelBytes = statSync(modelPath).size;
    const served = await startServed({ model: modelPath, shared_arena: true, replicas: 3 });
    // Every engine has run its warm-up, which reads every layer's weights from the arena.
    const pids = [process.pid, ...served.workstation.replicas.replicaView().map((v) => v.pid!)];
    const shmem = await Promise.all(pids.map((pid) => rollup(pid, 'Pss_Shmem')));
    const total = shmem.reduce((a, b) => a + b, 0);
    /** Other shared memory these processes map (measured 0 here); the weights themselves are the rest. */
    const allowance = 1024 * 1024;
    console.log(
      `arena PSS (shmem): ${shmem.map((b) => (b / 1048576).toFixed(2)).join(' + ')} = ${(total / 1048576).toFixed(2)} MiB for a ${(modelBytes / 1048576).toFixed(2)} MiB model`,
    );
    expect(total).toBeLessThanOrEqual(1.1 * modelBytes + allowance);
    // …and the weights are really mapped from the arena by each engine (3 private copies would be 3× the model).
    for (const engineShare of shmem.slice(1)) expect(engineShare).toBeGreaterThan((0.5 * modelBytes) / 3);
    expect(total).toBeGreaterThan(0.5 * modelBytes);
  });

  it("falls back to a /dev/shm-style file without memfd, sweeping a dead workstation's file first, and removes its own at close", async () => {
    const shmDir = mkdtempSync(join(tmpdir(), 'manifold-shm-'));
    const uid = process.getuid!();
    const stale = join(shmDir, `manifold-${uid}-4194305.bin`);
    writeFileSync(stale, 'GGUF left behind');
    const served = await startServed({ shared_arena: true, replicas: 1 }, { arenaFacts: { memfdAvailable: false, shmDir } });
    const arena = served.workstation.arenaStatus();
    const own = join(shmDir, `manifold-${uid}-${process.pid}.bin`);
    expect(arena).toMatchObject({ state: 'ready', kind: 'shm-file', enginePath: own });
    expect(existsSync(stale)).toBe(false);
    expect(served.logs).toContain(`arena: removed ${stale}, left by a workstation that no longer runs`);
    expect(createHash('sha256').update(readFileSync(own)).digest('hex')).toBe(arena.sha256);
    expect(statSync(own).mode & 0o777).toBe(0o400);
    const done = await served.workstation.generate({ tokens: [300, 301, 302], maxTokens: 2, ignoreEos: true });
    expect(done.completionTokens).toHaveLength(2);
    await served.close();
    expect(existsSync(own)).toBe(false);
  });

  it('has no arena when RAM is short: one log line, and the replicas load the model file', async () => {
    const served = await startServed({ shared_arena: true, replicas: 1 }, { arenaFacts: { availableRamBytes: 64 * 1024 * 1024 } });
    const arena = served.workstation.arenaStatus();
    expect(arena).toMatchObject({ state: 'off', kind: null, enginePath: null });
    expect(arena.reason).toMatch(/^not enough free RAM for the arena: it needs .* 64\.0 MiB is available; each replica loads the model file itself$/);
    expect(served.logs.filter((l) => l.startsWith('arena: none ('))).toHaveLength(1);
    expect(engineOf(served.workstation.replicas, 0).loadOptions.modelPath).toBe(testModelPath());
    await waitFor(() => (served.workstation.status().status === 'ok' ? true : undefined), 'the workstation to be ok');
  });

  it("fills the arena but warns when it and the engines' private memory would not fit free RAM", async () => {
    const modelBytes = statSync(testModelPath()).size;
    // Enough for the arena and its headroom, not for 2 engines' runtime (~257 MiB each with their KV) besides.
    const served = await startServed(
      { shared_arena: true, replicas: 2 },
      { arenaFacts: { availableRamBytes: modelBytes + ARENA_HEADROOM_BYTES + 1024 * 1024 } },
    );
    const arena = served.workstation.arenaStatus();
    expect(arena).toMatchObject({ state: 'ready', kind: 'memfd' });
    expect(arena.warning).toMatch(
      /^RAM: the arena \(1\.8 MiB\) plus 2 engines' private memory \(~257\.0 MiB each\) need 515\.8 MiB, but 514\.8 MiB is available; expect swapping/,
    );
    expect(served.logs).toContain(`arena: warning: ${arena.warning}`);
  });

  it('refuses a file that is not a GGUF with a clear error, and leaves no arena behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifold-arena-'));
    const fake = join(dir, 'notes.gguf');
    writeFileSync(fake, 'these are not weights'.repeat(100));
    const before = await arenaFds();
    // The loader's validation refuses it before any arena is made.
    await expect(startServed({ model: fake, shared_arena: true, replicas: 1 })).rejects.toThrow(`${fake} failed validation: not a GGUF file`);
    expect(await arenaFds()).toEqual(before);
    // The arena's own check, on the bytes it streams, whatever checked the header before.
    await expect(ModelArena.open({ kind: 'memfd', name: 'manifold-model' }, fake)).rejects.toThrow(
      `${fake} is not a GGUF file (it does not start with the GGUF magic)`,
    );
    expect(await arenaFds()).toEqual(before);
  });
});
