/**
 * `npm run build:electron`: bundles the desktop app's Node side with esbuild into dist/ — the main
 * process (ESM), the preload (CommonJS, as the sandbox requires), the engine child and the tokenizer
 * child — keeping npm packages external (they ship in node_modules, native ones unpacked from the asar).
 */
import { build } from 'esbuild';
import { childBundleOptions } from '../common/node/child-bundle.js';

const common = { bundle: true, platform: 'node', target: 'node22', sourcemap: true, logLevel: 'warning' } as const;

await Promise.all([
  build({ ...common, entryPoints: ['electron/main.ts'], outfile: 'dist/electron/main.js', format: 'esm', packages: 'external' }),
  build({ ...common, entryPoints: ['electron/preload.ts'], outfile: 'dist/electron/preload.cjs', format: 'cjs', external: ['electron'] }),
  build({ ...childBundleOptions('main', 'dist/engine-bin/main.js', common.target), sourcemap: true }),
  build({ ...childBundleOptions('tokenizer-main', 'dist/engine-bin/tokenizer-main.js', common.target), sourcemap: true }),
]);
console.log('built dist/electron/main.js, dist/electron/preload.cjs, dist/engine-bin/main.js, dist/engine-bin/tokenizer-main.js');
