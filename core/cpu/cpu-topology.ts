/**
 * CPU cores for replicas (DESIGN §3): the machine's physical cores read from Linux sysfs
 * (`/sys/devices/system/cpu/cpuN/topology`), and their partition into disjoint sets of whole cores, one
 * per replica, SMT siblings kept together. Reading is separate from partitioning so the partition is
 * tested on topology fixtures.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One physical core: its package and core id, and the logical CPUs (SMT siblings) on it. */
export interface PhysicalCore {
  readonly package: number;
  readonly core: number;
  readonly cpus: readonly number[];
}

export const SYSFS_CPU_ROOT = '/sys/devices/system/cpu';

/** "0-3,8,10-11" → [0, 1, 2, 3, 8, 10, 11]; throws on anything else. */
export function parseCpuList(text: string): number[] {
  const cpus: number[] = [];
  for (const part of text.trim().split(',').filter(Boolean)) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) throw new Error(`"${text.trim()}" is not a CPU list`);
    const from = Number(match[1]);
    const to = Number(match[2] ?? match[1]);
    if (to < from) throw new Error(`"${part}" runs backwards`);
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** The physical cores under `root` (a sysfs cpu folder), or why they could not be read. */
export async function readCpuTopology(root = SYSFS_CPU_ROOT): Promise<{ cores: PhysicalCore[] } | { unreadable: string }> {
  try {
    const online = parseCpuList(await readFile(join(root, 'online'), 'utf8'));
    const present = new Set((await readdir(root)).filter((name) => /^cpu\d+$/.test(name)).map((name) => Number(name.slice(3))));
    const byCore = new Map<string, { package: number; core: number; cpus: Set<number> }>();
    for (const cpu of online.filter((c) => present.has(c))) {
      const topology = join(root, `cpu${cpu}`, 'topology');
      const read = async (file: string): Promise<string> => (await readFile(join(topology, file), 'utf8')).trim();
      const pkg = Number(await read('physical_package_id'));
      const core = Number(await read('core_id'));
      const siblings = parseCpuList(await read('thread_siblings_list'));
      const key = `${pkg}:${core}`;
      const entry = byCore.get(key) ?? { package: pkg, core, cpus: new Set<number>() };
      for (const sibling of [cpu, ...siblings.filter((s) => online.includes(s))]) entry.cpus.add(sibling);
      byCore.set(key, entry);
    }
    if (byCore.size === 0) return { unreadable: `no online CPUs under ${root}` };
    const cores = [...byCore.values()]
      .map((c) => ({ package: c.package, core: c.core, cpus: [...c.cpus].sort((a, b) => a - b) }))
      .sort((a, b) => a.cpus[0]! - b.cpus[0]!);
    return { cores };
  } catch (error) {
    return { unreadable: `the CPU topology under ${root} could not be read (${(error as Error).message})` };
  }
}

/**
 * Whole physical cores cut into `replicas` disjoint sets, in order, as even as possible (the first sets
 * get one more core when they do not divide). Null with the reason when there are fewer cores than replicas.
 */
export function partitionCores(cores: readonly PhysicalCore[], replicas: number): { sets: number[][] } | { reason: string } {
  if (replicas < 1) return { reason: 'no replicas to pin' };
  if (cores.length < replicas) return { reason: `${replicas} replicas need at least ${replicas} physical cores; this machine has ${cores.length}` };
  const base = Math.floor(cores.length / replicas);
  const extra = cores.length % replicas;
  const sets: number[][] = [];
  let next = 0;
  for (let r = 0; r < replicas; r++) {
    const take = base + (r < extra ? 1 : 0);
    sets.push(cores.slice(next, next + take).flatMap((c) => c.cpus));
    next += take;
  }
  return { sets };
}
