/** Where the Electron binary is, or why it is missing (its npm package installs it by a download). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function electronBinary(root: string = process.cwd()): { path: string } | { missing: string } {
  const pkg = join(root, 'node_modules', 'electron');
  if (!existsSync(pkg)) return { missing: 'the electron package is not installed (npm ci)' };
  const pathFile = join(pkg, 'path.txt');
  if (!existsSync(pathFile)) return { missing: 'its download was skipped or failed (node_modules/electron/path.txt is absent)' };
  const binary = join(pkg, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? { path: binary } : { missing: `${binary} does not exist` };
}
