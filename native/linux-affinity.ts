/**
 * `sched_setaffinity(2)` through koffi (Linux only): pins one thread (a tid; a process's main thread has
 * tid = pid) to a set of logical CPUs. Threads it creates afterwards inherit the set.
 */
import koffi from 'koffi';
import { bindFunctions, type Prototypes } from './koffi-bind.js';

/** Bytes of the cpu_set_t passed (glibc's CPU_SETSIZE of 1024 CPUs). */
const CPU_SET_BYTES = 128;

interface Libc {
  sched_setaffinity(tid: number, size: number, mask: Buffer): number;
}

export const LIBC_AFFINITY_PROTOTYPES: Prototypes<Libc> = {
  sched_setaffinity: 'int sched_setaffinity(int pid, size_t cpusetsize, const uint8_t *mask)',
};

let libc: Libc | undefined;

function bind(): Libc {
  if (process.platform !== 'linux') throw new Error('CPU affinity is set only on Linux');
  libc ??= bindFunctions<Libc>(koffi.load('libc.so.6'), LIBC_AFFINITY_PROTOTYPES);
  return libc;
}

export function setThreadAffinity(tid: number, cpus: readonly number[]): void {
  const mask = Buffer.alloc(CPU_SET_BYTES);
  for (const cpu of cpus) {
    if (!Number.isInteger(cpu) || cpu < 0 || cpu >= CPU_SET_BYTES * 8) throw new RangeError(`CPU ${cpu} is outside 0..${CPU_SET_BYTES * 8 - 1}`);
    mask[cpu >> 3]! |= 1 << (cpu & 7);
  }
  if (bind().sched_setaffinity(tid, mask.length, mask) !== 0) throw new Error(`sched_setaffinity(${tid}) failed with errno ${koffi.errno()}`);
}
