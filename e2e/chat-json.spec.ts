/**
 * The chat window's "JSON" toggle, as a user drives it: `npm run serve` on the generated model in a real
 * Chromium; with JSON on and a schema in its box the answer is held to the schema by a grammar (the
 * random test model's reply parses and validates); a schema keyword the grammar cannot express is shown
 * as the answer's error, naming it. A screenshot is saved under test-results/screens.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { ensureTestModel } from '../build/test-model.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';
import { newChat, sendMessage } from './chat-page.js';

test.describe.configure({ mode: 'serial' });

let server: ServeProcess | undefined;
let page: Page;

/** Enums, booleans and integers only: the answer is shown as Markdown, which leaves these as they are. */
const SCHEMA = {
  type: 'object',
  properties: { sky: { enum: ['sun', 'rain', 'snow'] }, windy: { type: 'boolean' }, degrees: { type: 'integer' } },
  required: ['sky', 'windy', 'degrees'],
  additionalProperties: false,
};

test.beforeAll(async ({ browser }) => {
  const model = await ensureTestModel('tiny');
  const dataDir = join(mkdtempSync(join(tmpdir(), 'manifold-e2e-json-')), 'data');
  server = await startServe(['--model', model, '--replicas', '1', '--port', '0', '--data-dir', dataDir]);
  page = await browser.newPage();
  await page.goto(server.dashboard);
});

test.afterAll(async () => {
  await page?.close();
  await stopServe(server);
});

async function ask(text: string): Promise<ReturnType<Page['getByTestId']>> {
  const answers = page.getByTestId('answer');
  const before = await answers.count();
  await sendMessage(page, text);
  await expect(answers).toHaveCount(before + 1);
  const answer = answers.nth(before);
  await expect(answer).not.toHaveClass(/streaming/);
  return answer;
}

test('answers in JSON of the schema in the box, and names a keyword the grammar cannot express', async () => {
  await page.getByRole('button', { name: 'Chat' }).click();
  await newChat(page, { Seed: '5' });
  await page.getByRole('checkbox', { name: 'JSON' }).check();
  await page.getByRole('textbox', { name: 'JSON schema' }).fill(JSON.stringify(SCHEMA));

  const answer = await ask('What is the weather like?');
  await expect(answer.getByTestId('served-by')).toBeVisible();
  const reply = JSON.parse((await answer.locator('.markdown').textContent()) ?? '') as Record<string, unknown>;
  expect(Object.keys(reply)).toEqual(['sky', 'windy', 'degrees']);
  expect(['sun', 'rain', 'snow']).toContain(reply.sky);
  expect(typeof reply.windy).toBe('boolean');
  expect(Number.isInteger(reply.degrees)).toBe(true);
  await page.screenshot({ path: join('test-results', 'screens', 'chat-json.png'), fullPage: true });

  await page.getByRole('textbox', { name: 'JSON schema' }).fill(JSON.stringify({ type: 'string', pattern: '^a+$' }));
  const refused = await ask('And a pattern?');
  await expect(refused.locator('.error')).toContainText('"pattern" at # is not supported');

  await page.getByRole('textbox', { name: 'JSON schema' }).fill('{not json');
  await sendMessage(page, 'Broken schema?');
  await expect(page.getByRole('alert')).toContainText('the JSON schema is not JSON');
});
