/**
 * A conversation that used tools through the API opens readably in the chat window: `npm run serve` on
 * the generated model; with the official `openai` client, a forced call and then its result and an
 * answer sent with `store: true`; in a real Chromium, the conversation is listed with an "API" mark and
 * opens with the call as a block (the function's name and its arguments) and the result as a block
 * labelled with the call. A screenshot is saved under test-results/screens.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import OpenAI from 'openai';
import { ensureTestModel } from '../build/test-model.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';

let server: ServeProcess | undefined;

/** Starts serve on the generated model as one replica; resolves with its API and dashboard links (one port). */
async function serveModel(): Promise<{ api: string; dashboard: string }> {
  const model = await ensureTestModel('tiny');
  const dataDir = join(mkdtempSync(join(tmpdir(), 'manifold-e2e-tools-')), 'data');
  server = await startServe(['--model', model, '--replicas', '1', '--port', '0', '--data-dir', dataDir]);
  return { api: `${new URL(server.dashboard).origin}/v1`, dashboard: server.dashboard };
}

test.afterAll(async () => {
  await stopServe(server);
});

test('a tool round trip stored through the API opens with its call and result as blocks', async ({ page }) => {
  const { api, dashboard } = await serveModel();
  const client = new OpenAI({ baseURL: api, apiKey: 'unused', maxRetries: 0 });
  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } }, required: ['city'], additionalProperties: false },
      },
    },
  ];
  const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };
  const forced = await client.chat.completions.create({
    model: 'default',
    messages: [question],
    tools,
    tool_choice: 'required',
    max_tokens: 100,
    temperature: 0,
  });
  const call = forced.choices[0]!.message.tool_calls![0]!;
  if (call.type !== 'function') throw new Error('a function call was forced');
  const result = JSON.stringify({ temperature: 21, sky: 'clear' });
  await client.chat.completions.create({
    model: 'default',
    messages: [question, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: result }],
    tools,
    max_tokens: 8,
    temperature: 0,
    store: true,
  });

  await page.goto(dashboard);
  await page.getByRole('button', { name: 'Chat' }).click();
  const listed = page.getByRole('complementary', { name: 'conversations' }).getByRole('listitem');
  await expect(listed).toHaveCount(1);
  await expect(listed.locator('.badge')).toHaveText('API');
  await listed.getByRole('button', { name: 'What is the weather in Paris?', exact: true }).click();

  const callBlock = page.getByTestId('tool-call');
  await expect(callBlock).toHaveCount(1);
  await expect(callBlock.locator('figcaption')).toContainText('get_weather');
  await expect(callBlock.locator('pre')).toHaveText(JSON.stringify(JSON.parse(call.function.arguments), null, 2));
  const resultBlock = page.getByTestId('tool-result');
  await expect(resultBlock.locator('figcaption')).toContainText(`result of get_weather ${call.id}`);
  await expect(resultBlock.locator('pre')).toHaveText(JSON.stringify(JSON.parse(result), null, 2));
  await expect(page.getByTestId('answer')).toHaveCount(2);
  await page.screenshot({ path: join('test-results', 'screens', 'chat-tools.png'), fullPage: true });
});
