/**
 * A thinking model's answer in the chat window: `npm run serve` on a grafted DeepSeek-R1-Distill-Llama
 * model (its template opens `<think>` in the generation prompt). An exchange stored through the API with
 * `store: true` (the random model made to think and answer by a grammar) opens with its thinking in a
 * collapsed "Thought for …" block and its answer apart; opened, the block shows the thinking. A message
 * typed in the window is answered as the model thinks, and the block says how long and how much. With a
 * thinking budget set in the chat's settings (offered because the model thinks), the engine closes the
 * thinking after that many tokens and the model answers. A screenshot of each is saved under
 * test-results/screens.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import OpenAI from 'openai';
import { ensureFamilyModel } from '../build/family-models.js';
import { newChat, sendMessage } from './chat-page.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';

let server: ServeProcess | undefined;

test.afterAll(async () => {
  await stopServe(server);
});

test('a thinking answer shows its thinking in a collapsed block apart from its answer', async ({ page }) => {
  const model = await ensureFamilyModel('deepseek-r1-distill-llama');
  const dataDir = join(mkdtempSync(join(tmpdir(), 'manifold-e2e-thinking-')), 'data');
  server = await startServe(['--model', model, '--replicas', '1', '--port', '0', '--data-dir', dataDir]);
  const client = new OpenAI({ baseURL: `${new URL(server.dashboard).origin}/v1`, apiKey: 'unused', maxRetries: 0 });
  const grammar = 'root ::= "The user asks about the sky.\\nIt is blue because of Rayleigh scattering.\\n" "</think>" "\\n\\nThe sky is blue."';
  const stored = await client.chat.completions.create({
    model: 'default',
    messages: [{ role: 'user', content: 'Why is the sky blue?' }],
    max_tokens: 80,
    temperature: 0,
    store: true,
    grammar,
  } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  expect((stored.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe(
    'The user asks about the sky.\nIt is blue because of Rayleigh scattering.',
  );

  await page.goto(server.dashboard);
  await page.getByRole('button', { name: 'Chat' }).click();
  await page.getByRole('complementary', { name: 'conversations' }).getByRole('button', { name: 'Why is the sky blue?', exact: true }).click();
  const answer = page.getByTestId('answer');
  const thinking = answer.getByTestId('thinking');
  // Stored from the API, it has no thinking time: the block says only how much.
  await expect(thinking.locator('summary')).toHaveText('Thoughts · 71 characters');
  await expect(thinking.locator('pre')).toBeHidden();
  await expect(answer).toContainText('The sky is blue.');
  await thinking.locator('summary').click();
  await expect(thinking.locator('pre')).toHaveText('The user asks about the sky.\nIt is blue because of Rayleigh scattering.');
  await page.screenshot({ path: join('test-results', 'screens', 'chat-thinking-stored.png'), fullPage: true });

  // Typed in the window: the random model thinks (its answer never closes the thinking within 40 tokens).
  await newChat(page, { 'Max tokens': '40' });
  await sendMessage(page, 'Think about this.');
  const live = page.getByTestId('answer').getByTestId('thinking');
  await expect(live.locator('summary')).toContainText(/Thought for \d+\.\d s · [\d,]+ characters/);
  await live.locator('summary').click();
  await expect(live.locator('pre')).not.toBeEmpty();
  const liveThought = (await live.locator('pre').textContent())!;
  await page.screenshot({ path: join('test-results', 'screens', 'chat-thinking-live.png'), fullPage: true });

  // A budget of 4 thinking tokens: the engine closes the thinking and the rest of the 40 tokens are the answer.
  await newChat(page, { 'Max tokens': '40', 'Thinking budget (tokens)': '4' });
  await expect(page.getByRole('combobox', { name: /^Thinking/ })).toHaveValue('default');
  await sendMessage(page, 'Think briefly.');
  const budgeted = page.getByTestId('answer');
  await expect(budgeted.getByTestId('served-by')).toBeVisible();
  await expect(budgeted.getByTestId('thinking').locator('summary')).toContainText(/Thought for/);
  await expect(budgeted.locator('.markdown')).not.toBeEmpty();
  const thought = await budgeted.getByTestId('thinking').locator('pre').textContent();
  expect(thought!.length).toBeLessThan(liveThought.length);
  await page.screenshot({ path: join('test-results', 'screens', 'chat-thinking-budget.png'), fullPage: true });
});
