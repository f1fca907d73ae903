/**
 * Typed koffi bindings: a library's functions declared once as C prototypes keyed by name, bound together
 * and typed by a TypeScript interface. The prototype tables are exported so a test can parse each one
 * with `koffi.proto` on any platform, including the Windows and NVML ones that cannot be loaded here.
 */
import koffi, { type LibraryHandle } from 'koffi';

/** C prototypes keyed by the function each declares. */
export type Prototypes<T> = { readonly [K in keyof T]: string };

/** Binds every prototype of `prototypes` from `library`, typed as `T`. */
export function bindFunctions<T extends object>(library: LibraryHandle, prototypes: Prototypes<T>): T {
  const bound: Record<string, unknown> = {};
  for (const [name, prototype] of Object.entries(prototypes) as [string, string][]) bound[name] = library.func(prototype);
  return bound as T;
}

/**
 * Defines a named C type unless it exists: koffi's type names are process-wide and outlive a module
 * evaluated twice (test runners do that), and a second definition would throw.
 */
export function defineTypeOnce(name: string, define: (name: string) => unknown): void {
  try {
    koffi.type(name);
  } catch {
    define(name);
  }
}
