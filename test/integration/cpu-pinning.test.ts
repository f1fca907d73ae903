/** Replicas pinned to disjoint physical cores on this machine, read back from /proc/<pid>/status. */
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { allowedCpus } from '../../core/cpu/cpu-pinning.js';
import { readCpuTopology } from '../../core/cpu/cpu-topology.js';
import { startReplicaSet } from '../helpers/replica-sets.js';

const topology = await readCpuTopology();
const cores = 'cores' in topology ? topology.cores : [];
const why =
  process.platform !== 'linux'
    ? `not Linux (${process.platform})`
    : 'cores' in topology
      ? cores.length < 2
        ? `only ${cores.length} physical core here`
        : null
      : topology.unreadable;
if (why) console.log(`skipped: CPU pinning needs Linux and 2 physical cores: ${why}`);

describe.skipIf(why !== null)('CPU pinning', () => {
  it('pins each of 2 replicas, every thread, to its own whole cores', async () => {
    const { set, logs } = await startReplicaSet({ replicas: 2 });
    const views = set.replicaView();
    const sets = views.map((v) => v.cpus);
    expect(sets[0]!.length).toBeGreaterThan(0);
    expect(sets[0]!.filter((cpu) => sets[1]!.includes(cpu))).toEqual([]);
    expect(logs.some((l) => l.startsWith('CPU pinning: replica 0 → CPUs'))).toBe(true);
    for (const view of views) {
      expect(await allowedCpus(view.pid!)).toEqual(view.cpus);
      const tids = await readdir(`/proc/${view.pid}/task`);
      expect(tids.length).toBeGreaterThan(1);
      for (const tid of tids) expect(await allowedCpus(Number(tid)).catch(() => view.cpus)).toEqual(view.cpus);
    }
    // It still serves, pinned.
    const done = await set.generate({ tokens: [300, 301, 302], maxTokens: 2, ignoreEos: true });
    expect(done.completionTokens).toHaveLength(2);
  });

  it('leaves the engines on every core when the config opts out', async () => {
    const { set } = await startReplicaSet({ replicas: 2, pinCores: false });
    const all = cores.flatMap((c) => c.cpus).sort((a, b) => a - b);
    for (const view of set.replicaView()) {
      expect(view.cpus).toEqual([]);
      expect(await allowedCpus(view.pid!)).toEqual(all);
    }
  });
});
