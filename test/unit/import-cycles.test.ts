/**
 * No import circle anywhere in the source (type-only imports count: a circle of types is a circle of
 * concepts): every relative import of every source file, found by TypeScript's own pre-processor, as one
 * graph, and its strongly connected components. The layer map (build/eslint/layer-map.js) already forbids
 * circles between layers; this finds those inside one.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..');
const FOLDERS = ['common', 'core', 'cli', 'electron', 'engine-bin', 'native', 'renderer', 'build', 'bench', 'test', 'e2e'];

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The source file a relative specifier names (`./x.js` is `./x.ts` or `./x.tsx`); null for a package or a non-source file. */
function resolveImport(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return null;
}

/** Tarjan's strongly connected components of more than one file, or of one file importing itself. */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('imports', () => {
  it('make no circle', () => {
    const files = FOLDERS.flatMap((folder) => sources(join(root, folder)));
    const graph = new Map(
      files.map((file) => [
        file,
        ts
          .preProcessFile(readFileSync(file, 'utf8'), true, true)
          .importedFiles.map((imported) => resolveImport(file, imported.fileName))
          .filter((target): target is string => target !== null),
      ]),
    );
    expect(files.length).toBeGreaterThan(250);
    expect(circles(graph).map((component) => component.map((file) => relative(root, file)))).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    expect(
      circles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
    expect(
      circles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });
});
