/**
 * The top-level forge.config.ts as Electron Forge itself reads it (its own loader, jiti for TypeScript):
 * the build runs in the `generateAssets` hook `npm start` triggers, no native module is rebuilt against
 * Electron's headers (a rebuild would fetch them), and no maker: packages come from electron-builder.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const require = createRequire(import.meta.url);

describe('forge.config.ts', () => {
  it('is found and loaded by Forge 7, with the build hook, no rebuild and no makers', async () => {
    const loader = require('@electron-forge/core/dist/util/forge-config.js') as { default: (dir: string) => Promise<Record<string, unknown>> };
    const config = await loader.default(root);
    expect(config.rebuildConfig).toEqual({ onlyModules: [] });
    expect(config.makers).toEqual([]);
    expect(Object.keys(config.hooks as object)).toEqual(['generateAssets']);
    expect(config.packagerConfig).toMatchObject({ name: 'Manifold', asar: true });
  });
});
