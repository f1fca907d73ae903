/**
 * The koffi declarations of native/: every prototype parses (the Windows and NVML ones too, which cannot
 * be loaded here) and names the function it is bound as; on Linux, a memfd is made, filled and sealed.
 */
import { readFileSync, readlinkSync, closeSync, writeSync } from 'node:fs';
import koffi, { type TypeObject } from 'koffi';
import { describe, expect, it } from 'vitest';
import { LIBC_AFFINITY_PROTOTYPES } from '../../native/linux-affinity.js';
import { createMemfd, LIBC_MEMFD_PROTOTYPES, sealReadOnly } from '../../native/linux-memfd.js';
import { NVML_PROTOTYPES } from '../../native/nvml.js';
import { KERNEL32_PROTOTYPES } from '../../native/windows-section.js';

const tables = { libc_affinity: LIBC_AFFINITY_PROTOTYPES, libc_memfd: LIBC_MEMFD_PROTOTYPES, kernel32: KERNEL32_PROTOTYPES, nvml: NVML_PROTOTYPES };
/** koffi registers a parsed prototype's name as a type, so each is parsed once, here. */
const parsed = new Map<string, TypeObject>();
for (const prototypes of Object.values(tables)) for (const prototype of Object.values(prototypes)) parsed.set(prototype, koffi.proto(prototype));

describe('koffi declarations', () => {
  for (const [library, prototypes] of Object.entries(tables)) {
    it(`${library}: every prototype parses and declares the function it is bound as`, () => {
      for (const [name, prototype] of Object.entries(prototypes)) expect(parsed.get(prototype)!.name, prototype).toBe(name);
    });
  }

  it("declares the argument counts kernel32 and NVML take, and NVML's struct layouts", () => {
    const arity = (p: string): number => parsed.get(p)!.proto?.arguments.length ?? -1;
    expect(arity(KERNEL32_PROTOTYPES.CreateFileW)).toBe(7);
    expect(arity(KERNEL32_PROTOTYPES.CreateFileMappingW)).toBe(6);
    expect(arity(NVML_PROTOTYPES.nvmlDeviceGetName)).toBe(3);
    expect(arity(NVML_PROTOTYPES.nvmlDeviceGetTemperature)).toBe(3);
    expect(koffi.sizeof('nvmlMemory_t')).toBe(24);
    expect(koffi.sizeof('nvmlUtilization_t')).toBe(8);
  });
});

const why = process.platform === 'linux' ? null : `memfd is Linux-only (this is ${process.platform}); the plan's tests cover the other platforms`;
if (why) console.log(`skipped: ${why}`);

describe.skipIf(why !== null)('memfd', () => {
  it('is a file another opener reads through /proc, and sealed it refuses writes', () => {
    const fd = createMemfd('manifold-test');
    try {
      writeSync(fd, Buffer.from('GGUF and more'));
      expect(readlinkSync(`/proc/self/fd/${fd}`)).toBe('/memfd:manifold-test (deleted)');
      sealReadOnly(fd);
      expect(readFileSync(`/proc/${process.pid}/fd/${fd}`, 'utf8')).toBe('GGUF and more');
      expect(() => writeSync(fd, Buffer.from('x'), 0, 1, 0)).toThrow(/EPERM/);
    } finally {
      closeSync(fd);
    }
  });
});
