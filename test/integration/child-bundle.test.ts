/**
 * The children's bundles as the plain-Node spawn makes them (common/node/child-bundle.ts): several
 * processes bundling the same entry into the same folder at once each get a whole file, and none of
 * their partial files is left behind; npm packages stay imports, resolved from the repository.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tsxExecArgv } from '../helpers/tsx.js';

const root = join(import.meta.dirname, '..', '..');

/** Bundles `engine-bin/main.ts` into `outDir` in a process of its own; resolves with the path it printed. */
function bundleInAProcess(outDir: string): Promise<string> {
  const script = `import { bundleChild } from ${JSON.stringify(join(root, 'common', 'node', 'child-bundle.ts'))}; console.log(bundleChild('main', ${JSON.stringify(root)}, ${JSON.stringify(outDir)}));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...tsxExecArgv(), '--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`the bundling process exited with ${code}`))));
  });
}

describe('child bundles', () => {
  it('lets three processes bundle the engine into one folder at once: one whole file, no partial left, packages external', async () => {
    const outDir = mkdtempSync(join(tmpdir(), 'manifold-child-bundle-'));
    onTestFinished(() => rmSync(outDir, { recursive: true, force: true }));
    const paths = await Promise.all([1, 2, 3].map(() => bundleInAProcess(outDir)));
    expect(new Set(paths)).toEqual(new Set([join(outDir, 'main.js')]));
    expect(readdirSync(outDir)).toEqual(['main.js']);
    const bundle = readFileSync(join(outDir, 'main.js'), 'utf8');
    expect(bundle).toMatch(/from "node-llama-cpp"/);
    expect(bundle).toContain('sourceMappingURL=data:application/json');
  }, 60_000);
});
