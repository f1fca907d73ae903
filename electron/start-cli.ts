/**
 * `npm start`: builds the UI and the desktop bundles, then opens the Electron window. Where the Electron
 * binary is not installed (its installer downloads it, which some machines cannot), it says how to get
 * it and offers `npm run serve`, the same workstation in a browser.
 */
import { spawn, spawnSync } from 'node:child_process';
import { electronBinary } from '../build/electron-binary.js';

const binary = electronBinary();
if ('missing' in binary) {
  console.error(`The Electron binary is not installed: ${binary.missing}.`);
  console.error('Get it on a machine with network access:  node node_modules/electron/install.js   (then npm start again)');
  console.error('Or run the same workstation in a browser:  npm run serve   and open the dashboard URL it prints.');
  process.exit(1);
}
for (const script of ['build:ui', 'build:electron']) {
  const built = spawnSync('npm', ['run', script, '--silent'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}
const app = spawn(binary.path, ['.'], { stdio: 'inherit' });
app.on('exit', (code) => process.exit(code ?? 0));
