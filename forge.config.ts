/**
 * Electron Forge (7.11) for development: `npm start` runs `electron-forge start` through
 * `electron/start-cli.ts`, which first says what to do where the Electron binary is missing. Forge's
 * `generateAssets` hook builds what the window loads (the UI with Vite, the main, preload and engine
 * bundles with esbuild), then Forge starts Electron on `package.json`'s `main`. Nothing is rebuilt
 * against Electron's headers (`onlyModules: []`): node-llama-cpp and koffi ship N-API binaries, and the
 * engines run them in utility processes. Packages for users are made by electron-builder (`npm run dist`,
 * `electron-builder.json`), not Forge makers: see docs/ARCHITECTURE.md, "Packaging".
 */
import { spawnSync } from 'node:child_process';
import type { ForgeConfig } from '@electron-forge/shared-types';

/** Runs an npm script of this project, failing the hook when it fails. */
function npmRun(script: string): void {
  const result = spawnSync('npm', ['run', script, '--silent'], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm run ${script} failed (exit ${result.status ?? result.signal})`);
}

const config: ForgeConfig = {
  rebuildConfig: { onlyModules: [] },
  packagerConfig: { name: 'Manifold', asar: true },
  makers: [],
  hooks: {
    generateAssets: async () => {
      npmRun('build:ui');
      npmRun('build:electron');
    },
  },
};

export default config;
