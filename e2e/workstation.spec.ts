/**
 * The workstation through its UI, as a user drives it: `npm run serve --idle` in a real Chromium; load the
 * generated model as 2 replicas from the loader (a corrupt file first: a clear error), chat two
 * conversations of two turns (streaming seen, reused prompt tokens rising), the dashboard's routed
 * counts and slot view following, three API requests more than the slots hold and the evicted state
 * shown in the slot view's RAM tier, and a live resize of the context from the controls (Applied, prefixes
 * kept), the log panel kept at its newest line with the engines' output behind a toggle, and an answer a
 * crash cut off, shown as interrupted and regenerated. A screenshot of each
 * screen is saved under test-results/screens.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { ensureTestModel } from '../build/test-model.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';
import { newChat, sendMessage } from './chat-page.js';

test.describe.configure({ mode: 'serial' });

let server: ServeProcess | undefined;
let dashboard = '';
let modelPath = '';
let corruptPath = '';
let dataDir = '';
let page: Page;

test.beforeAll(async ({ browser }) => {
  modelPath = await ensureTestModel('tiny');
  const work = mkdtempSync(join(tmpdir(), 'manifold-e2e-'));
  corruptPath = join(work, 'models', 'corrupt.gguf');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(join(work, 'models'));
  writeFileSync(corruptPath, Buffer.concat([Buffer.from('GGUF'), Buffer.from([3, 0, 0, 0]), Buffer.alloc(64, 0xff)]));
  dataDir = join(work, 'data');
  server = await startServe(['--idle', '--port', '0', '--data-dir', dataDir, '--models-dir', join(work, 'models')]);
  dashboard = server.dashboard;
  page = await browser.newPage();
  // Records every text a streaming answer shows, to see that it arrives in pieces.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { streamedTexts: string[] }).streamedTexts = seen;
    new MutationObserver(() => {
      const live = document.querySelector('.message.streaming');
      const text = live?.textContent ?? '';
      if (text && text !== '…' && seen.at(-1) !== text) seen.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(dashboard);
});

test.afterAll(async () => {
  await page?.close();
  await stopServe(server);
});

const shot = (name: string) => page.screenshot({ path: join('test-results', 'screens', `${name}.png`), fullPage: true });

test('the loader refuses a corrupt GGUF with a clear error', async () => {
  // With no model the dashboard says so, and its link opens the Models page.
  await page.getByRole('button', { name: 'Dashboard' }).click();
  await page.getByRole('button', { name: 'Load a model' }).click();
  await expect(page.getByRole('button', { name: 'Models', exact: true })).toHaveAttribute('aria-pressed', 'true');
  // The loader's list of found files (the library table above lists it too).
  const found = page.locator('.sources').getByText(/corrupt\.gguf/);
  await expect(found).toBeVisible();
  await found.click();
  await expect(page.getByLabel('model path')).toHaveValue(corruptPath);
  await page.getByRole('button', { name: 'Inspect' }).click();
  await expect(page.getByRole('alert')).toContainText(`${corruptPath}:`);
  await expect(page.getByRole('alert')).toContainText(/GGUF|truncated|invalid/i);
  await page.getByRole('button', { name: 'Load', exact: true }).click();
  await expect(page.getByRole('alert')).toContainText(corruptPath);
  await expect(page.getByTestId('status')).toContainText('no model · idle');
  await shot('loader-corrupt-file');
});

test('loads the generated model as 2 replicas from the loader, with progress', async () => {
  await page.getByLabel('model path').fill(modelPath);
  await page.getByLabel('replicas').fill('2');
  await page.getByLabel('cards').selectOption('cpu');
  await page.getByLabel('context size').fill('1024');
  await page.getByLabel('slots').fill('2');
  await page.getByRole('button', { name: 'Inspect' }).click();
  const info = page.getByLabel('model info');
  await expect(info).toContainText('llama');
  await expect(info).toContainText('CPU (RAM), 2 replicas: fits');
  await page.getByRole('button', { name: 'Load', exact: true }).click();
  await expect(page.getByLabel('load progress')).toBeVisible();
  await expect(page.getByLabel('load progress')).toContainText('ready: 2/2 replicas');
  await expect(page.getByTestId('status')).toContainText('· ok · 2/2 replicas');
  await shot('loader-loaded');
});

async function turn(text: string): Promise<number> {
  const answers = page.getByTestId('answer');
  const before = await answers.count();
  await page.evaluate(() => ((window as unknown as { streamedTexts: string[] }).streamedTexts.length = 0));
  await sendMessage(page, text);
  await expect(answers).toHaveCount(before + 1);
  const served = answers.nth(before).getByTestId('served-by');
  await expect(served).toBeVisible();
  const pieces = await page.evaluate(() => (window as unknown as { streamedTexts: string[] }).streamedTexts.length);
  expect(pieces, 'the answer was shown in several pieces while it streamed').toBeGreaterThan(1);
  return Number(await served.getByTestId('reused').textContent());
}

test('chats two conversations of two turns: streaming, and reused prompt tokens rise', async () => {
  await page.getByRole('button', { name: 'Chat' }).click();
  for (const topic of ['first', 'second']) {
    // A fixed seed makes the noise model's answers the same on every run (some seeds end at once).
    await newChat(page, { 'Max tokens': '160', Seed: '3' });
    // Longer than one 64-token block with the system prompt, so the router's prefix index sees the conversation.
    const one = await turn(
      `Tell me about the ${topic} topic, at length please: where it comes from, what people say about it, why it matters, and what you would read next if you wanted to know more about the ${topic} topic.`,
    );
    const two = await turn(`And more about the ${topic} one?`);
    expect(two, `the second turn of the ${topic} conversation reuses more of its prompt`).toBeGreaterThan(one);
    expect(two).toBeGreaterThan(0);
  }
  await expect(page.getByRole('complementary', { name: 'conversations' }).getByRole('listitem')).toHaveCount(2);
  // The generated model's answers are noise, and the window says so.
  await expect(page.getByTestId('test-model-note')).toContainText('random weights');
  await shot('chat');
});

/** Requests routed to the two replicas, as their cards say. */
const routed = async (): Promise<number> => Number(await page.getByTestId('routed-0').textContent()) + Number(await page.getByTestId('routed-1').textContent());

test('the dashboard shows the routed requests and the conversations in the slot view', async () => {
  await page.getByRole('button', { name: 'Dashboard' }).click();
  await expect.poll(routed).toBeGreaterThanOrEqual(4);
  const slots = page.getByRole('table', { name: 'slots' });
  await expect(slots.getByRole('row')).toHaveCount(5);
  const conversations = await slots.locator('tbody td:nth-child(5)').allTextContents();
  expect(new Set(conversations.filter((c) => c !== '—')).size).toBe(2);
  await expect(page.getByTestId('gpu-note')).toContainText('no GPU');
  // Requests (running, waiting) on their own axis, apart from tokens/s; the charts are no tab stops.
  const queue = page.getByRole('figure', { name: 'tokens per second and queue' });
  await expect(queue.locator('.recharts-yAxis')).toHaveCount(2);
  await expect(queue).toContainText('requests');
  await expect(page.locator('.recharts-wrapper [tabindex="0"], .recharts-surface[tabindex="0"]')).toHaveCount(0);
  await shot('dashboard');
});

test("the log panel tails Manifold's own events; Engine output adds the engines' lines", async () => {
  const log = page.getByLabel('log', { exact: true });
  await expect(log).toContainText('workstation ready');
  // Kept scrolled to its newest line.
  await expect.poll(() => log.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 4)).toBe(true);
  expect((await log.textContent())!.split('\n').filter((line) => / debug /.test(line))).toEqual([]);
  const engineOutput = page.getByRole('checkbox', { name: 'Engine output' });
  await engineOutput.check();
  // llama-server children print their start-up and each request's timings: debug lines.
  if ((await log.textContent())!.includes('starting llama-server')) await expect(log).toContainText(' debug ');
  await shot('dashboard-log');
  await engineOutput.uncheck();
});

test('the slot view shows a conversation evicted from its slot, saved in the RAM tier', async () => {
  // Five long, different prompts on 4 slots: some request takes a slot whose tokens it would drop, and its engine saves them first.
  for (const topic of ['rivers', 'mountains', 'deserts']) {
    const response = await fetch(new URL('/v1/chat/completions', dashboard), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: [
          {
            role: 'user',
            content: `${topic}: ${`Say everything you know about ${topic}, how they form, where they are found, and why people travel to see them. `.repeat(3)}`,
          },
        ],
        max_tokens: 4,
        seed: 3,
      }),
    });
    const body = await response.text();
    expect(response.status, body).toBe(200);
  }
  await expect.poll(routed).toBeGreaterThanOrEqual(7);
  const cache = page.getByRole('table', { name: 'prefix cache' });
  const ramEntries = async (): Promise<number> =>
    (await cache.locator('tr[data-testid$="-RAM"] [data-testid="tier-entries"]').allTextContents()).reduce((sum, n) => sum + Number(n), 0);
  await expect.poll(ramEntries).toBeGreaterThanOrEqual(1);
  await expect(cache.locator('tr[data-testid$="-RAM"]').filter({ hasText: /· \d+/ }).first()).toContainText(/KiB|MiB/);
  await shot('dashboard-prefix-cache');
});

test('resizes the context live from the controls: checked, then Applied with prefixes kept', async () => {
  const resize = page.getByLabel('resize');
  // Apply waits for a check, and says so.
  await resize.getByLabel('Context size').fill('8192');
  await expect(resize.getByRole('button', { name: 'Apply' })).toBeDisabled();
  await expect(resize.getByTestId('apply-hint')).toHaveText('Check the new sizes first: Apply is offered once they fit');
  // A context beyond the 4096 tokens the test model was trained on fits, with a warning; sizes in the unit that reads.
  await resize.getByRole('button', { name: 'Check' }).click();
  await expect(resize.getByLabel('pre-check')).toContainText('beyond the 4096 the model was trained on');
  await expect(resize.getByLabel('pre-check')).toContainText(/\d+(\.\d)? [KM]iB/);
  await expect(resize.getByLabel('pre-check')).not.toContainText('0.00 GiB');
  await shot('resize-checked');
  await resize.getByLabel('Context size').fill('2048');
  await resize.getByRole('button', { name: 'Check' }).click();
  await expect(resize.getByLabel('pre-check').getByRole('listitem')).toHaveCount(2);
  await expect(resize.getByLabel('pre-check')).not.toContainText('does not fit');
  await expect(resize.getByLabel('pre-check')).not.toContainText('warning');
  await resize.getByRole('button', { name: 'Apply' }).click();
  const outcomes = resize.getByLabel('outcomes').getByRole('listitem');
  await expect(outcomes).toHaveCount(2);
  for (const line of await outcomes.allTextContents()) {
    const kept = /Applied — 2 slots × 2048 tokens, (\d+) prefix(es)? kept/.exec(line);
    expect(kept, line).not.toBeNull();
    expect(Number(kept![1])).toBeGreaterThanOrEqual(1);
  }
  await shot('resize-applied');
});

test('shows an answer a crash cut off as interrupted, and regenerates it', async () => {
  // What a process killed mid-answer leaves: the answer saved as streaming by a run that is gone.
  const now = Date.now();
  const message = { servedBy: null, stopped: false, error: null };
  writeFileSync(
    join(dataDir, 'conversations', 'crashed-chat.json'),
    JSON.stringify({
      id: 'crashed-chat',
      title: 'Crashed chat',
      systemPrompt: 'Be brief.',
      sampling: { temperature: 0.8, topP: 0.95, topK: 40, maxTokens: 24, seed: 3 },
      messages: [
        { id: 'q', role: 'user', content: 'hello there', ...message, state: 'complete', writer: null },
        { id: 'a', role: 'assistant', content: 'the first half of an ans', ...message, state: 'streaming', writer: 'a-run-that-crashed' },
      ],
      createdAt: now,
      updatedAt: now,
    }),
  );
  await page.getByRole('button', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'Crashed chat', exact: true }).click();
  const answer = page.getByTestId('answer').last();
  await expect(answer).toContainText('the first half of an ans');
  const note = answer.getByTestId('interrupted');
  await expect(note).toContainText('interrupted');
  await shot('chat-interrupted');
  await note.getByRole('button', { name: 'Regenerate' }).click();
  await expect(page.getByTestId('answer').last().getByTestId('served-by')).toBeVisible();
  await expect(page.getByTestId('interrupted')).toHaveCount(0);
});
