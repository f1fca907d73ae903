/**
 * A replica's engine child starts with libuv's pool sized to its slots (engine-child-env.ts), read back from
 * /proc/<pid>/environ, unless it is pinned to one CPU; a size set in the config's env is the one it gets; it
 * serves either way.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { startReplicaSet } from '../helpers/replica-sets.js';

const why =
  process.platform !== 'linux'
    ? `reading a child's environment from /proc needs Linux (this is ${process.platform}); engine-child-env's unit test covers the sizing`
    : process.env.UV_THREADPOOL_SIZE !== undefined
      ? `UV_THREADPOOL_SIZE is set in this environment (${process.env.UV_THREADPOOL_SIZE}), which every child inherits as it is; engine-child-env's unit test covers the sizing`
      : null;
if (why) console.log(`skipped: ${why}`);

async function childEnv(pid: number): Promise<Map<string, string>> {
  const raw = await readFile(`/proc/${pid}/environ`, 'utf8');
  return new Map(
    raw
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

describe.skipIf(why !== null)('engine child thread pool', () => {
  it('sizes the pool to the slots, and keeps the size the config sets', async () => {
    const { set } = await startReplicaSet({ replicas: 1, pinCores: false, engine: { contextSize: 1024, slots: 1, threads: 1 } });
    const sized = await childEnv(set.replicaView()[0]!.pid!);
    expect(sized.get('UV_THREADPOOL_SIZE')).toBe('1');
    expect((await set.generate({ tokens: [300, 301, 302], maxTokens: 3, ignoreEos: true })).completionTokens).toHaveLength(3);

    const { set: configured } = await startReplicaSet({
      replicas: 1,
      pinCores: false,
      env: { UV_THREADPOOL_SIZE: '3' },
      engine: { contextSize: 1024, slots: 1, threads: 1 },
    });
    expect((await childEnv(configured.replicaView()[0]!.pid!)).get('UV_THREADPOOL_SIZE')).toBe('3');
    expect((await configured.generate({ tokens: [300, 301, 302], maxTokens: 3, ignoreEos: true })).completionTokens).toHaveLength(3);
  });

  it("leaves libuv's default to a replica pinned to one CPU", async () => {
    const { set } = await startReplicaSet({ replicas: 2, engine: { contextSize: 1024, slots: 1, threads: 1 } });
    for (const view of set.replicaView()) {
      const size = (await childEnv(view.pid!)).get('UV_THREADPOOL_SIZE');
      // Pinned to one CPU (each vCPU a core of its own, as on the 2-vCPU test machines): libuv's default; on whole cores of two CPUs or more, or
      // unpinned: one thread.
      expect(size).toBe(view.cpus.length === 1 ? undefined : '1');
    }
    expect((await set.generate({ tokens: [300, 301, 302], maxTokens: 3, ignoreEos: true })).completionTokens).toHaveLength(3);
  });
});
