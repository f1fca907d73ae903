#!/usr/bin/env node
// `manifold`: the command line (cli/manifold.ts) compiled by esbuild into .cache/cli/manifold.mjs
// at its first run and again whenever one of its sources is newer, then run in this process, so a command
// answers without compiling TypeScript first (tsx took ~1 s each time). `manifold serve` runs serve
// through tsx's loader, as `npm run serve` does: it starts once and runs for hours.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

if (args[0] === 'serve') {
  const loader = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  const child = spawn(process.execPath, ['--import', loader, join(root, 'cli', 'serve-command.ts'), ...args.slice(1)], { stdio: 'inherit' });
  // serve counts a Ctrl-C that arrives twice at once (the terminal's and this one) as one.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  const bundle = join(root, '.cache', 'cli', 'manifold.mjs');
  const inputs = `${bundle}.inputs.json`;
  /** Whether the bundle is missing or older than one of the sources it was made from. */
  const stale = () => {
    try {
      const made = statSync(bundle).mtimeMs;
      return JSON.parse(readFileSync(inputs, 'utf8')).some((file) => statSync(join(root, file)).mtimeMs > made);
    } catch {
      return true;
    }
  };
  if (stale()) {
    const { buildSync } = createRequire(import.meta.url)('esbuild');
    mkdirSync(dirname(bundle), { recursive: true });
    const partial = `${bundle}.${process.pid}.partial`;
    const result = buildSync({
      entryPoints: ['cli/manifold.ts'],
      absWorkingDir: root,
      outfile: partial,
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      target: `node${process.versions.node.split('.')[0]}`,
      metafile: true,
      logLevel: 'warning',
    });
    writeFileSync(inputs, JSON.stringify(Object.keys(result.metafile.inputs)));
    renameSync(partial, bundle);
  }
  // The bundle lives under .cache/cli/: the code that finds files in the repository asks here.
  process.env.MANIFOLD_ROOT ??= root;
  await import(pathToFileURL(bundle).href);
}
