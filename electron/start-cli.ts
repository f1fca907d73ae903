/**
 * `npm start`: Electron Forge's `start` with the top-level `forge.config.ts` (its `generateAssets` hook
 * builds the UI and the desktop bundles, then Forge opens the Electron window). Where the Electron binary
 * is not installed (its installer downloads it, which some machines cannot), it says how to get it and
 * offers `npm run serve`, the same workstation in a browser, instead of Forge's stack trace.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { electronBinary } from '../build/electron-binary.js';

const binary = electronBinary();
if ('missing' in binary) {
  console.error(`The Electron binary is not installed: ${binary.missing}.`);
  console.error('Get it on a machine with network access:  node node_modules/electron/install.js   (then npm start again)');
  console.error('Or run the same workstation in a browser:  npm run serve   and open the dashboard URL it prints.');
  process.exit(1);
}
const forge = join(process.cwd(), 'node_modules', '@electron-forge', 'cli', 'dist', 'electron-forge.js');
const app = spawn(process.execPath, [forge, 'start', ...process.argv.slice(2)], { stdio: 'inherit' });
app.on('exit', (code) => process.exit(code ?? 0));
