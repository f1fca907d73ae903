/** CPU topology reading and the per-replica partition, on sysfs fixtures (SMT and not). */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCpuList, partitionCores, readCpuTopology } from '../../core/cpu/cpu-topology.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

/** A sysfs cpu folder: `cpus[i]` = [package, core, siblings list] for cpu i. */
async function fixture(cpus: [number, number, string][], online = `0-${cpus.length - 1}`): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'manifold-topology-'));
  roots.push(root);
  await writeFile(join(root, 'online'), `${online}\n`);
  for (const [i, [pkg, core, siblings]] of cpus.entries()) {
    const dir = join(root, `cpu${i}`, 'topology');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'physical_package_id'), `${pkg}\n`);
    await writeFile(join(dir, 'core_id'), `${core}\n`);
    await writeFile(join(dir, 'thread_siblings_list'), `${siblings}\n`);
  }
  return root;
}

describe('CPU topology and partition', () => {
  it('parses CPU lists and refuses what is not one', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('5')).toEqual([5]);
    expect(() => parseCpuList('0-a')).toThrow(/not a CPU list/);
    expect(() => parseCpuList('3-1')).toThrow(/backwards/);
  });

  it('keeps SMT siblings together: 4 cores × 2 threads into 2 replicas', async () => {
    // Linux numbers siblings apart: cpu0 and cpu4 share core 0, and so on.
    const root = await fixture([0, 1, 2, 3, 0, 1, 2, 3].map((core) => [0, core, `${core},${core + 4}`] as [number, number, string]));
    const topology = await readCpuTopology(root);
    expect('cores' in topology && topology.cores.map((c) => c.cpus)).toEqual([
      [0, 4],
      [1, 5],
      [2, 6],
      [3, 7],
    ]);
    if (!('cores' in topology)) return;
    expect(partitionCores(topology.cores, 2)).toEqual({
      sets: [
        [0, 4, 1, 5],
        [2, 6, 3, 7],
      ],
    });
    expect(partitionCores(topology.cores, 3)).toEqual({
      sets: [
        [0, 4, 1, 5],
        [2, 6],
        [3, 7],
      ],
    });
  });

  it('without SMT each CPU is a core; two packages with the same core ids stay apart', async () => {
    const root = await fixture([
      [0, 0, '0'],
      [0, 1, '1'],
      [1, 0, '2'],
      [1, 1, '3'],
      [1, 2, '4'],
    ]);
    const topology = await readCpuTopology(root);
    if (!('cores' in topology)) throw new Error(topology.unreadable);
    expect(topology.cores).toHaveLength(5);
    expect(partitionCores(topology.cores, 2)).toEqual({
      sets: [
        [0, 1, 2],
        [3, 4],
      ],
    });
    expect(partitionCores(topology.cores, 6)).toEqual({ reason: '6 replicas need at least 6 physical cores; this machine has 5' });
  });

  it('leaves offline CPUs out', async () => {
    const root = await fixture(
      [
        [0, 0, '0'],
        [0, 1, '1'],
        [0, 2, '2'],
      ],
      '0,2',
    );
    const topology = await readCpuTopology(root);
    expect('cores' in topology && topology.cores.map((c) => c.cpus)).toEqual([[0], [2]]);
  });

  it('an unreadable topology says why instead of pinning', async () => {
    const missing = await readCpuTopology(join(tmpdir(), 'manifold-no-such-sysfs'));
    expect(missing).toMatchObject({ unreadable: expect.stringMatching(/could not be read/) });
    const root = await fixture([[0, 0, '0']]);
    await rm(join(root, 'cpu0', 'topology', 'core_id'));
    expect(await readCpuTopology(root)).toMatchObject({ unreadable: expect.stringMatching(/core_id/) });
  });
});
