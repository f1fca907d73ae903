/** Test helper: the Node flags that run TypeScript source through tsx's loader (a CLI or fixture started from the source). */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export function tsxExecArgv(): string[] {
  return ['--import', pathToFileURL(join(import.meta.dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'loader.mjs')).href];
}
