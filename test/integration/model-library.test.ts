/**
 * The model library (the Models page's table, `manifold ls`) on real GGUF files: the models folder's
 * models with their metadata, and the loaded model listed first, marked, when it was loaded from outside
 * the folder (the generated test model, a path given to `--model`).
 */
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ModelLibrary } from '../../core/models/model-library.js';
import { suggestLayoutFor } from '../../core/models/model-inspector.js';
import { testModelPath } from '../helpers/engines.js';

it('lists the loaded model first, marked, when it was loaded from outside the models folder', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'manifold-library-'));
  const modelsDir = join(dataDir, 'models');
  const library = new ModelLibrary(dataDir, modelsDir);
  mkdirSync(modelsDir, { recursive: true });
  copyFileSync(testModelPath(), join(modelsDir, 'copy.gguf'));
  const suggest = (header: Parameters<typeof suggestLayoutFor>[0]) => suggestLayoutFor(header, null);
  const entries = await library.list(testModelPath(), suggest);
  expect(entries.map((e) => [e.file, e.loaded])).toEqual([
    [testModelPath(), true],
    ['copy.gguf', false],
  ]);
  expect(entries[0]).toMatchObject({ architecture: 'llama', error: null });
  // Loaded from the folder: listed once, where it is.
  expect((await library.list(join(modelsDir, 'copy.gguf'), suggest)).map((e) => [e.file, e.loaded])).toEqual([['copy.gguf', true]]);
});
