/**
 * Linux anonymous memory files through koffi: `memfd_create(2)` for the shared arena (DESIGN §6) and
 * `fcntl(F_ADD_SEALS)` to make it read-only for good once it is filled. The fd is an ordinary Node fd
 * (fs.write, fs.close work on it); another process of the same user opens it as `/proc/<pid>/fd/<fd>`.
 */
import koffi from 'koffi';
import { bindFunctions, type Prototypes } from './koffi-bind.js';

const MFD_CLOEXEC = 0x1;
const MFD_ALLOW_SEALING = 0x2;
const F_ADD_SEALS = 1033;
const F_SEAL_SEAL = 0x1;
const F_SEAL_SHRINK = 0x2;
const F_SEAL_GROW = 0x4;
const F_SEAL_WRITE = 0x8;

interface Libc {
  memfd_create(name: string, flags: number): number;
  fcntl(fd: number, command: number, ...variadic: unknown[]): number;
}

export const LIBC_MEMFD_PROTOTYPES: Prototypes<Libc> = {
  memfd_create: 'int memfd_create(const char *name, unsigned int flags)',
  fcntl: 'int fcntl(int fd, int cmd, ...)',
};

let libc: Libc | undefined;

function bind(): Libc {
  if (process.platform !== 'linux') throw new Error(`memfd_create exists only on Linux, not ${process.platform}`);
  libc ??= bindFunctions<Libc>(koffi.load('libc.so.6'), LIBC_MEMFD_PROTOTYPES);
  return libc;
}

/** Creates an empty memfd named `name` (shown as `/memfd:<name>` in /proc), close-on-exec, sealable. */
export function createMemfd(name: string): number {
  const fd = bind().memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) throw new Error(`memfd_create failed with errno ${koffi.errno()}`);
  return fd;
}

/** Seals a filled memfd: its size and bytes can no longer change, and the seals themselves are final. */
export function sealReadOnly(fd: number): void {
  const seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
  if (bind().fcntl(fd, F_ADD_SEALS, 'int', seals) !== 0) throw new Error(`sealing memfd ${fd} failed with errno ${koffi.errno()}`);
}
