/**
 * A tab that outlives its server: open the dashboard of `npm run serve` (the replica card shows its
 * context, slots and KV type), chat one turn (the empty chat says what to do; the answer can be copied;
 * the question edited and resent, which drops the old answer), stop the server —
 * the tab says it is not answering and retries; start it again on the same port and data dir — the SAME
 * tab reconnects by itself (the control token is kept in the data dir) and shows the conversation; start it
 * with `--new-token` — the tab says its session expired and how to reconnect. Screenshots of each state
 * land under test-results/screens.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { ensureTestModel } from '../build/test-model.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';
import { sendMessage } from './chat-page.js';

/** Starts serve with the generated model as one replica on `port` over `dataDir`. */
const serveModel = (modelPath: string, dataDir: string, port: number, extra: string[] = []): Promise<ServeProcess> =>
  startServe(['--model', modelPath, '--replicas', '1', '--port', String(port), '--data-dir', dataDir, ...extra]);

test('the same tab reconnects after a restart and shows its conversation; after --new-token it says the session expired', async ({ page, context }) => {
  test.setTimeout(240_000);
  const modelPath = await ensureTestModel('tiny');
  const dataDir = join(mkdtempSync(join(tmpdir(), 'manifold-e2e-reconnect-')), 'data');
  const shot = (name: string) => page.screenshot({ path: join('test-results', 'screens', `${name}.png`), fullPage: true });

  let served = await serveModel(modelPath, dataDir, 0);
  const port = Number(new URL(served.dashboard).port);
  try {
    await page.goto(served.dashboard);
    await expect(page.getByTestId('status')).toContainText('· ok · 1/1 replicas');
    await expect(page.getByTestId('context-0')).toContainText(/^\d+ tokens × \d+ slots$/);
    await page.getByRole('button', { name: 'Chat' }).click();
    await expect(page.getByTestId('chat-empty')).toContainText('Type a message below');
    await shot('chat-empty');
    await sendMessage(page, 'Remember the lantern');
    await expect(page.getByTestId('answer').getByTestId('served-by')).toBeVisible();
    await expect(page.getByTestId('chat-empty')).toHaveCount(0);

    // Copy an answer: the clipboard holds its text.
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const firstAnswer = await page.getByTestId('answer').locator('.markdown, p').first().textContent();
    await page.getByRole('button', { name: 'copy answer' }).click();
    await expect(page.getByRole('button', { name: 'copy answer' })).toHaveText('Copied');
    expect((await page.evaluate(() => navigator.clipboard.readText())).trim().slice(0, 20)).toBe((firstAnswer ?? '').trim().slice(0, 20));

    // Edit and resend the question: one question with the new text, one new answer (the old one goes at
    // once, so the answer served afterwards is the new one).
    await page.getByTestId('question').getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('textbox', { name: 'edit message' }).fill('Remember the lighthouse');
    await page.getByRole('button', { name: 'Save and resend' }).click();
    await expect(page.getByTestId('question')).toHaveText(/^Remember the lighthouse/);
    await expect(page.getByTestId('answer')).toHaveCount(1);
    await expect(page.getByTestId('answer').getByTestId('served-by')).toBeVisible();
    await shot('chat-edited-and-resent');

    await stopServe(served);
    await expect(page.getByTestId('status')).toHaveText('server not answering · retrying');
    await expect(page.getByTestId('connection-banner')).toContainText('reconnects by itself');
    await shot('reconnect-server-gone');
    // The dashboard does not claim a state it cannot know.
    await page.getByRole('button', { name: 'Dashboard' }).click();
    await expect(page.getByTestId('replica-0').locator('.badge')).toHaveText('unknown');
    await shot('reconnect-dashboard-stale');
    await page.getByRole('button', { name: 'Chat' }).click();

    served = await serveModel(modelPath, dataDir, port);
    // The same tab, not reloaded: it finds the server again with the kept token.
    await expect(page.getByTestId('status')).toContainText('· ok · 1/1 replicas', { timeout: 60_000 });
    await expect(page.getByTestId('connection-banner')).toHaveCount(0);
    await expect(page.getByTestId('question')).toHaveText(/^Remember the lighthouse/);
    await expect(page.getByTestId('answer').getByTestId('served-by')).toBeVisible();
    await expect(page.getByRole('complementary', { name: 'conversations' })).toContainText('Remember the lighthouse');
    await shot('reconnect-same-tab-back');

    // A reload of the same tab (the URL still carries the kept token) opens as well, on the same view
    // and conversation.
    await page.reload();
    await expect(page.getByTestId('status')).toContainText('· ok · 1/1 replicas');
    await expect(page.getByTestId('question')).toHaveText(/^Remember the lighthouse/);
    await expect(page.getByTestId('answer').getByTestId('served-by')).toBeVisible();
    await stopServe(served);

    served = await serveModel(modelPath, dataDir, port, ['--new-token']);
    await expect(page.getByTestId('status')).toHaveText('session expired', { timeout: 60_000 });
    await expect(page.getByRole('alert')).toContainText('session has expired');
    await expect(page.getByRole('alert')).toContainText('Dashboard');
    await shot('reconnect-session-expired');

    // The new link works in the same tab.
    await page.goto(served.dashboard);
    await expect(page.getByTestId('status')).toContainText('· ok · 1/1 replicas');
  } finally {
    await stopServe(served);
  }
});
