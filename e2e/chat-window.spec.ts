/**
 * The chat window's everyday fixes, as a user meets them: `npm run serve` on the generated model in a real
 * Chromium. After "New chat" the cursor is in the message box; a message typed over two lines
 * (Shift+Enter) keeps its line break in its bubble and never leaves the screen while it is answered; a temperature above OpenAI's 2 is shown as the 2 that
 * is sent; under the answer, its pace (tokens/s) and its time to the first token; Regenerate keeps the
 * first answer as a version (‹ 1/2 ›); the window says the
 * generated model's answers are noise; the system's light preference gives the light theme. Screenshots
 * are saved under test-results/screens.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ensureTestModel } from '../build/test-model.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';

let server: ServeProcess | undefined;

test.afterAll(async () => {
  await stopServe(server);
});

test('new chat focus, kept line breaks, temperature in range, and the answer timings', async ({ page }) => {
  const model = await ensureTestModel('tiny');
  const dataDir = join(mkdtempSync(join(tmpdir(), 'manifold-e2e-window-')), 'data');
  server = await startServe(['--model', model, '--replicas', '1', '--port', '0', '--data-dir', dataDir]);
  await page.goto(server.dashboard);
  await page.getByRole('button', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  const box = page.getByRole('textbox', { name: 'message', exact: true });
  await expect(box).toBeFocused();

  await page.getByText('System prompt and sampling').click();
  const temperature = page.getByLabel('Temperature');
  await temperature.fill('5');
  await temperature.blur();
  await expect(temperature).toHaveValue('2');
  await page.getByLabel('Max tokens').fill('24');
  await page.getByLabel('Max tokens').blur();
  await page.getByText('System prompt and sampling').click();

  // Watch the question while it is asked and answered: once shown, it never leaves the screen (it used to for ~70 ms as the answer ended).
  await page.evaluate(() => {
    const w = window as unknown as { questionSeen: boolean; questionLeft: boolean };
    w.questionSeen = false;
    w.questionLeft = false;
    new MutationObserver(() => {
      const shown = document.querySelectorAll('[data-testid="question"]').length > 0;
      if (shown) w.questionSeen = true;
      else if (w.questionSeen) w.questionLeft = true;
    }).observe(document.body, { childList: true, subtree: true });
  });
  await box.click();
  await box.pressSequentially('first line');
  await box.press('Shift+Enter');
  await box.pressSequentially('second line');
  await box.press('Enter');
  await expect(page.getByTestId('question').locator('p.typed')).toHaveText('first line\nsecond line');
  // Shown on two lines, not run together: the bubble keeps the typed line breaks.
  await expect(page.getByTestId('question').locator('p.typed')).toHaveCSS('white-space', 'pre-wrap');

  const served = page.getByTestId('answer').getByTestId('served-by');
  await expect(served).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { questionLeft: boolean }).questionLeft)).toBe(false);
  await expect(served).toContainText(/\d+\.\d tok\/s/);
  await expect(served).toContainText(/first token \d+\.\d\d s/);
  await expect(page.getByTestId('test-model-note')).toContainText('random weights');
  const firstAnswer = await page.getByTestId('answer').locator('.markdown').textContent();

  // Regenerate keeps the first answer as a version: ‹ 1/2 › flips between them.
  await page.getByRole('button', { name: 'Regenerate' }).click();
  await expect(page.getByTestId('answer').getByTestId('version')).toHaveText('2/2');
  await expect(page.getByTestId('answer').getByTestId('served-by')).toBeVisible();
  await page.getByRole('button', { name: 'earlier answer' }).click();
  await expect(page.getByTestId('answer').getByTestId('version')).toHaveText('1/2');
  await expect(page.getByTestId('answer').locator('.markdown')).toHaveText(firstAnswer!);
  await page.screenshot({ path: join('test-results', 'screens', 'chat-window.png'), fullPage: true });
  await page.getByRole('button', { name: 'later answer' }).click();
  await expect(page.getByTestId('answer').getByTestId('version')).toHaveText('2/2');

  // The system's light preference gives the light theme.
  const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await background()).toBe('rgb(16, 20, 24)');
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await background()).toBe('rgb(245, 247, 249)');
  await page.screenshot({ path: join('test-results', 'screens', 'chat-window-light.png'), fullPage: true });
});
