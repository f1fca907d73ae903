/**
 * Pinning an engine child to its replica's cores: every thread the process has now (Node's and libuv's
 * threads exist before the model loads; llama.cpp's are created later by them and inherit the set), and
 * reading back what the kernel allows (`Cpus_allowed_list` in `/proc/<pid>/status`).
 */
import { readdir, readFile } from 'node:fs/promises';
import { setThreadAffinity } from '../../native/linux-affinity.js';
import { parseCpuList } from './cpu-topology.js';

/** Pins every thread of `pid` to `cpus`; returns how many threads were pinned. */
export async function pinProcess(pid: number, cpus: readonly number[]): Promise<number> {
  const tids = (await readdir(`/proc/${pid}/task`)).map(Number);
  let pinned = 0;
  for (const tid of tids) {
    try {
      setThreadAffinity(tid, cpus);
      pinned++;
    } catch (error) {
      // A thread that ended between the listing and the call is no failure.
      if ((await readdir(`/proc/${pid}/task`)).includes(String(tid))) throw error;
    }
  }
  return pinned;
}

/** The CPUs the kernel lets `pid`'s main thread run on. */
export async function allowedCpus(pid: number): Promise<number[]> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const line = /^Cpus_allowed_list:\s*(.+)$/m.exec(status);
  if (!line) throw new Error(`/proc/${pid}/status has no Cpus_allowed_list`);
  return parseCpuList(line[1]!);
}
