/**
 * The Models page as a new user drives it, in a real Chromium against `npm run serve --idle` and a
 * loopback Hugging Face Hub serving the generated test model at a capped rate: download it with the
 * progress bar seen moving, find another on the Hub by words and download a file its repository lists,
 * read its metadata in the library, load it with the suggested layout in one
 * click, chat one message, unload, restart the server on the same port and data dir and reload the same
 * tab: it reconnects and shows the conversation. Screenshots under test-results/screens/models-*.png.
 */
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { ensureTestModel } from '../build/test-model.js';
import { startLoopbackHub, type LoopbackHub } from '../test/helpers/loopback-hub.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';
import { newChat, sendMessage } from './chat-page.js';

test.describe.configure({ mode: 'serial' });

let server: ServeProcess | undefined;
let hub: LoopbackHub;
let page: Page;
let dataDir: string;

/** `serve --idle` on `port` (0: any) over the test's data dir, with the loopback Hub as HF_ENDPOINT; resolves with the dashboard URL. */
async function serveIdle(port: number): Promise<string> {
  server = await startServe(['--idle', '--port', String(port), '--data-dir', dataDir], { HF_ENDPOINT: hub.endpoint });
  return server.dashboard;
}

test.beforeAll(async ({ browser }) => {
  const model = await readFile(await ensureTestModel('tiny'));
  // ~5 s for the 1.8 MiB model: long enough to see the bar move.
  hub = await startLoopbackHub([
    { path: 'test-org/tiny/tiny.gguf', bytes: model, bytesPerSecond: 400_000 },
    { path: 'test-org/lighthouse-GGUF/lighthouse-Q8_0.gguf', bytes: model },
  ]);
  dataDir = join(mkdtempSync(join(tmpdir(), 'manifold-e2e-models-')), 'data');
  const dashboard = await serveIdle(0);
  page = await browser.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(dashboard);
});

test.afterAll(async () => {
  await page?.close();
  await stopServe(server);
  await hub?.close();
});

const shot = (name: string) => page.screenshot({ path: join('test-results', 'screens', `${name}.png`), fullPage: true });
const row = () => page.getByRole('row', { name: 'hf_test-org_tiny_tiny.gguf' });

test('downloads a model from the Hub with the progress bar moving', async () => {
  await page.getByRole('button', { name: 'Models', exact: true }).click();
  await expect(page.getByRole('table', { name: 'models' })).toContainText('No models in');
  await page.getByLabel('model URI').fill('hf:test-org/tiny/tiny.gguf');
  await page.getByRole('button', { name: 'Download', exact: true }).click();
  const bar = page.getByLabel('download progress').locator('progress');
  const value = async (): Promise<number> => Number(await bar.getAttribute('value'));
  await expect.poll(value).toBeGreaterThan(0);
  const first = await value();
  await expect(page.getByLabel('download progress')).toContainText(/of 1\.8 MiB, [\d.]+ \w+\/s, \d+ s left/);
  await shot('models-1-download');
  await expect.poll(value).toBeGreaterThan(first);
  await expect(row()).toBeVisible();
  await expect(page.getByLabel('download progress')).toHaveCount(0);
});

test('finds a model on the Hub by words and downloads a file its repository lists', async () => {
  await page.getByLabel('hub search words').fill('lighthouse');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const results = page.getByRole('list', { name: 'hub results' });
  await expect(results).toContainText('test-org/lighthouse-GGUF');
  await results.getByRole('button', { name: 'test-org/lighthouse-GGUF' }).click();
  const files = page.getByRole('table', { name: 'files of test-org/lighthouse-GGUF' });
  await expect(files).toContainText('lighthouse-Q8_0.gguf');
  await expect(files).toContainText('1.8 MiB');
  await shot('models-hub-search');
  await files.getByRole('button', { name: 'Download' }).click();
  await expect(page.getByRole('row', { name: 'hf_test-org_lighthouse-Q8_0.gguf' })).toBeVisible();
});

test('shows the model in the library with its metadata and a suggested layout', async () => {
  await expect(row()).toContainText('llama');
  await expect(row()).toContainText('F32');
  await expect(row()).toContainText('1.8 MiB');
  await expect(row()).toContainText('4096');
  await expect(row()).toContainText(/1 × \d+ ctx × \d+ slots \(cpu\)/);
  await shot('models-2-library');
});

test('loads it with the suggested layout in one click, marked loaded', async () => {
  await row().getByRole('button', { name: 'Load' }).click();
  await expect(page.getByTestId('status')).toContainText('hf_test-org_tiny_tiny · ok · 1/1 replicas');
  await expect(row()).toContainText('● loaded');
  await expect(row().getByRole('button', { name: 'Delete' })).toBeDisabled();
  await shot('models-3-loaded');
});

test('chats one message with it', async () => {
  await page.getByRole('button', { name: 'Chat' }).click();
  // A short answer: the random-weight model's 256 default tokens take long on a busy CPU.
  await newChat(page, { 'Max tokens': '16' });
  await sendMessage(page, 'Hello there');
  await expect(page.getByTestId('answer')).toHaveCount(1);
  await expect(page.getByTestId('answer').getByTestId('served-by')).toBeVisible();
  await shot('models-4-chat');
});

test('unloads it: back to idle, the model still in the library', async () => {
  await page.getByRole('button', { name: 'Models', exact: true }).click();
  await row().getByRole('button', { name: 'Unload' }).click();
  await expect(page.getByTestId('status')).toContainText('no model · idle');
  await expect(row()).not.toContainText('● loaded');
  await expect(row().getByRole('button', { name: 'Load' })).toBeEnabled();
  await shot('models-5-unloaded');
});

test('restarts the server and reloads the same tab: it reconnects and shows the conversation', async () => {
  const port = Number(new URL(page.url()).port);
  await stopServe(server);
  await expect(page.getByTestId('status')).toHaveText('server not answering · retrying');
  await serveIdle(port);
  await page.reload();
  await expect(page.getByTestId('status')).toContainText('no model · idle');
  await expect(row()).toBeVisible();
  await page.getByRole('button', { name: 'Chat' }).click();
  await expect(page.getByRole('complementary', { name: 'conversations' })).toContainText('Hello there');
  await page.getByRole('complementary', { name: 'conversations' }).getByText('Hello there').click();
  await expect(page.getByTestId('question')).toHaveText(/^Hello there/);
  await expect(page.getByTestId('answer').getByTestId('served-by')).toBeVisible();
  await shot('models-6-restarted-same-tab');
});
