/** The core sub-layer table in docs/ARCHITECTURE.md is the layer map's, row for row (build/layer-table.ts makes it). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { layerTable } from '../../build/layer-table.js';

it('matches the layer map lint enforces (regenerate it with `npx tsx build/layer-table.ts`)', () => {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'ARCHITECTURE.md'), 'utf8');
  const table = /<!-- layer-table -->\n([\s\S]*?)\n<!-- \/layer-table -->/.exec(doc)?.[1];
  expect(table, 'the table between <!-- layer-table --> markers').toBeDefined();
  expect(table).toBe(layerTable());
});
