/**
 * The repository's folder, for the code that finds files in it (node_modules' llama.cpp bundle, the
 * engine-bin sources): `levels` folders up from the module at `moduleUrl`, or `$MANIFOLD_ROOT` where a
 * bundle that moved the module (the `manifold` CLI's, under .cache/cli/) says where the repository is.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export function repoRootFrom(moduleUrl: string, levels: number): string {
  return process.env.MANIFOLD_ROOT ?? resolve(dirname(fileURLToPath(moduleUrl)), ...Array<string>(levels).fill('..'));
}
