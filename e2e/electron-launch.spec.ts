/**
 * The desktop app's launch smoke test (Playwright's `_electron`): the built app opens its window, the
 * renderer talks to core over IPC (the status line fills in), and it is sandboxed (no `require`, no
 * `process` in the page). Runs only where the Electron binary is installed; here it is skipped with why.
 */
import { spawnSync } from 'node:child_process';
import { _electron as electron, expect, test } from '@playwright/test';
import { electronBinary } from '../build/electron-binary.js';

const binary = electronBinary();
const why = 'missing' in binary ? `the Electron binary is not installed (${binary.missing}); the window policy and IPC wrapper are unit-tested` : null;
if (why) console.log(`skipped: ${why}`);

test.skip(why !== null, why ?? '');

test('opens the window, which reaches core over IPC and has no Node in the page', async () => {
  for (const script of ['build:ui', 'build:electron']) expect(spawnSync('npm', ['run', script, '--silent']).status).toBe(0);
  const app = await electron.launch({
    executablePath: (binary as { path: string }).path,
    args: ['.', '--no-sandbox'],
    env: { ...process.env, MANIFOLD_PORT: '0' },
  });
  const window = await app.firstWindow();
  await expect(window.getByTestId('status')).toContainText('no model · idle');
  expect(await window.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe('undefined');
  expect(await window.evaluate(() => typeof (globalThis as { process?: unknown }).process)).toBe('undefined');
  expect(await window.evaluate(() => Object.keys((window as unknown as { manifold: object }).manifold).includes('loadModel'))).toBe(true);
  await app.close();
});
