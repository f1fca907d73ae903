/**
 * Windows named file sections through kernel32 (koffi): `CreateFileMappingW` over the model file, named
 * `Local\manifold-<pid>`, held by the main process so engines that map the same file share its pages
 * (DESIGN §6). Only bound on Windows; the prototypes are parsed by a test on every platform.
 */
import koffi from 'koffi';
import { bindFunctions, defineTypeOnce, type Prototypes } from './koffi-bind.js';

/** A kernel object handle (an opaque pointer); koffi gives null for NULL. */
export type WindowsHandle = unknown;

defineTypeOnce('HANDLE', (name) => koffi.pointer(name, koffi.opaque()));

const GENERIC_READ = 0x80000000;
const FILE_SHARE_READ = 0x1;
const FILE_SHARE_DELETE = 0x4;
const OPEN_EXISTING = 3;
const FILE_ATTRIBUTE_NORMAL = 0x80;
const PAGE_READONLY = 0x02;
const INVALID_HANDLE_VALUE = 0xffffffffffffffffn;

interface Kernel32 {
  CreateFileW(path: string, access: number, share: number, security: null, disposition: number, flags: number, template: null): WindowsHandle;
  CreateFileMappingW(file: WindowsHandle, security: null, protect: number, sizeHigh: number, sizeLow: number, name: string): WindowsHandle;
  CloseHandle(handle: WindowsHandle): boolean;
  GetLastError(): number;
}

export const KERNEL32_PROTOTYPES: Prototypes<Kernel32> = {
  CreateFileW:
    'HANDLE __stdcall CreateFileW(const char16_t *lpFileName, uint32_t dwDesiredAccess, uint32_t dwShareMode, void *lpSecurityAttributes, uint32_t dwCreationDisposition, uint32_t dwFlagsAndAttributes, HANDLE hTemplateFile)',
  CreateFileMappingW:
    'HANDLE __stdcall CreateFileMappingW(HANDLE hFile, void *lpFileMappingAttributes, uint32_t flProtect, uint32_t dwMaximumSizeHigh, uint32_t dwMaximumSizeLow, const char16_t *lpName)',
  CloseHandle: 'bool __stdcall CloseHandle(HANDLE hObject)',
  GetLastError: 'uint32_t __stdcall GetLastError()',
};

let kernel32: Kernel32 | undefined;

function bind(): Kernel32 {
  if (process.platform !== 'win32') throw new Error(`named sections exist only on Windows, not ${process.platform}`);
  kernel32 ??= bindFunctions<Kernel32>(koffi.load('kernel32.dll'), KERNEL32_PROTOTYPES);
  return kernel32;
}

/** Opens `path` read-only and creates a read-only section over all of it named `name`; returns the section. */
export function createNamedSection(path: string, name: string): WindowsHandle {
  const k = bind();
  const file = k.CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, null, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, null);
  if (file === null || koffi.address(file) === INVALID_HANDLE_VALUE) throw new Error(`CreateFileW(${path}) failed with error ${k.GetLastError()}`);
  try {
    const section = k.CreateFileMappingW(file, null, PAGE_READONLY, 0, 0, name);
    if (section === null) throw new Error(`CreateFileMappingW(${name}) failed with error ${k.GetLastError()}`);
    return section;
  } finally {
    // The section keeps its own reference to the file.
    k.CloseHandle(file);
  }
}

export function closeNamedSection(section: WindowsHandle): void {
  bind().CloseHandle(section);
}
