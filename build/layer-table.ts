/**
 * The core sub-layer table of docs/ARCHITECTURE.md, made from the layer map (build/eslint/layer-map.js),
 * so the doc says what lint enforces: `npx tsx build/layer-table.ts` prints it, and
 * test/unit/layer-table.test.ts fails when the doc's copy differs.
 */
import { coreSublayers } from './eslint/layer-map.js';

export function layerTable(): string {
  const code = (names: readonly string[]): string => names.map((n) => `\`${n}\``).join(', ');
  const rows = coreSublayers.map(({ name, allow, packages }: { name: string; allow: string[]; packages?: string[] }) => {
    const imports = allow.length > 0 ? code(allow) : 'nothing else of core';
    return `| \`${name}\` | ${imports} | ${packages?.length ? code(packages) : '—'} |`;
  });
  return ['| sub-layer | may import (of core) | npm packages |', '| --- | --- | --- |', ...rows].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(layerTable());
