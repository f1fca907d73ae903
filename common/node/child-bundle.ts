/**
 * The children as one file each: an entry of engine-bin/ bundled by esbuild, npm packages left external.
 * `npm run build:electron` makes these bundles for the desktop app; the plain-Node spawn (tests, `npm run
 * serve`, bench) makes them under .cache/engine-bin/ from the source at each entry's first spawn in the
 * process, so a child runs what the source says now. Run through tsx's loader instead, a child spent ~2.3 s
 * of one core before it could load a model, and a heal took 3.8 s instead of 1.5 s on the tiny model.
 * esbuild is a dev dependency, loaded here lazily: the packaged app forks dist/ and never calls `bundleChild`.
 */
import { randomUUID } from 'node:crypto';
import { renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';

/** The children's entries in engine-bin/ (without the extension: `.ts` from source, `.js` when bundled). */
export type ChildEntry = 'main' | 'tokenizer-main';

/** The esbuild options of an entry's bundle, for the app's build and the plain-Node spawn alike. */
export function childBundleOptions(entry: ChildEntry, outfile: string, target: string): BuildOptions {
  return { entryPoints: [`engine-bin/${entry}.ts`], outfile, bundle: true, platform: 'node', format: 'esm', packages: 'external', target, logLevel: 'warning' };
}

const built = new Map<ChildEntry, string>();

/**
 * `entry` bundled into `<outDir>/<entry>.js` (once per module instance: a process, or a worker thread),
 * with its source map inline. Written under a name of its own and renamed into place, so processes and
 * threads bundling at once never start a child on a half-written file.
 */
export function bundleChild(entry: ChildEntry, repoRoot: string, outDir: string): string {
  const existing = built.get(entry);
  if (existing) return existing;
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const outfile = join(outDir, `${entry}.js`);
  const partial = `${outfile}.${process.pid}-${randomUUID()}.partial`;
  buildSync({ ...childBundleOptions(entry, partial, `node${process.versions.node.split('.')[0]}`), absWorkingDir: repoRoot, sourcemap: 'inline' });
  renameSync(partial, outfile);
  built.set(entry, outfile);
  return outfile;
}
