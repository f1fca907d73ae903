/**
 * The model families people run, served end to end: a grafted family model (a real vocabulary and chat
 * template on random weights: build/family-models.ts) behind `serve`, on both engine kinds, through the
 * official `openai` client. Each holds a two-turn chat whose second turn reuses the first's prefix, and a
 * forced tool call whose arguments validate. Each thinking family answers with its thinking in
 * `reasoning_content` (the engine made to think in the family's tags by a grammar, since the weights are random), `content`
 * free of the tags, streamed reasoning deltas before content deltas; `reasoning_format: "none"` keeps the
 * raw text, and `chat_template_kwargs: {enable_thinking: false}` (or `reasoning_effort: "none"`) renders the
 * template with thinking off.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ensureFamilyModel, type FamilyName } from '../../build/family-models.js';
import { engineKinds } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';

type Served = Awaited<ReturnType<typeof startServed>>;

const clientOf = (served: Served): OpenAI => new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] }, days: { type: 'integer' } }, required: ['city', 'days'] },
  },
};

/** The tool-call format each family's template is read in (a template that renders no tools gets Hermes in a system prompt). */
const FORMATS: Partial<Record<FamilyName, string>> = {
  'glm-4.6': 'glm',
  'seed-oss': 'seed-oss',
  'deepseek-r1': 'deepseek-r1',
  'kimi-k2': 'kimi-k2',
  'gpt-oss': 'harmony',
  'qwen3-coder': 'qwen3-xml',
  'command-r7b': 'command-r7b',
  'llama3.1': 'llama3',
  'mistral-small-3.2': 'mistral-call-id',
  'hermes3-tools': 'hermes',
  qwen3: 'hermes',
  gemma4: 'gemma4',
};

/**
 * The grammar that makes the random model think and then answer in its family's tags (`open`: the
 * template's generation prompt opened the thinking already, so the answer starts inside it). gpt-oss
 * answers in harmony's final channel.
 */
function thinkingGrammar(tags: { start: string; end: string }, open: boolean): string {
  if (tags.start.includes('<|channel|>'))
    return 'root ::= "<|channel|>analysis<|message|>" "plan the steps" "<|end|>" "<|start|>assistant<|channel|>final<|message|>" "the answer"';
  return `root ::= ${open ? '' : `${JSON.stringify(tags.start)} `}"\\nplan the steps\\n" ${JSON.stringify(tags.end)} "\\n\\nthe answer"`;
}

/** The families whose template thinks (as llama.cpp finds it); Qwen3-Coder's does not. */
const THINKS = new Set<FamilyName>([
  'qwen3',
  'gpt-oss',
  'deepseek-r1-distill-llama',
  'deepseek-r1',
  'kimi-k2',
  'glm-4.6',
  'seed-oss',
  'gemma4',
  'command-r7b',
  'granite-3.3',
]);

const FAMILIES: FamilyName[] = [
  'qwen3',
  'llama3.1',
  'hermes3-tools',
  'mistral-small-3.2',
  'gemma4',
  'gpt-oss',
  'deepseek-r1-distill-llama',
  'deepseek-r1',
  'kimi-k2',
  'glm-4.6',
  'seed-oss',
  'qwen3-coder',
  'command-r7b',
  'granite-3.3',
];

async function checkChatAndTools(client: OpenAI, model: string): Promise<void> {
  const first = [{ role: 'user' as const, content: 'Hello, who are you?' }];
  const one = await client.chat.completions.create({ model, messages: first, max_tokens: 8, temperature: 0 });
  const answer = one.choices[0]!.message;
  const two = await client.chat.completions.create({
    model,
    messages: [...first, { role: 'assistant', content: answer.content ?? '' }, { role: 'user', content: 'And then?' }],
    max_tokens: 4,
    temperature: 0,
  });
  expect(two.usage!.prompt_tokens).toBeGreaterThan(one.usage!.prompt_tokens);
  expect(two.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(0);

  const forced = await client.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: [weather],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    max_tokens: 200,
    temperature: 0,
  });
  const call = forced.choices[0]!.message.tool_calls?.[0];
  expect(forced.choices[0]!.finish_reason).toBe('tool_calls');
  expect(call?.type === 'function' ? call.function.name : null).toBe('get_weather');
  const args = call?.type === 'function' ? (JSON.parse(call.function.arguments) as { city: string; days: number }) : null;
  expect(['Paris', 'Rome']).toContain(args?.city);
  expect(Number.isInteger(args?.days)).toBe(true);
}

async function checkThinking(client: OpenAI, model: string, thinking: { grammar: string }): Promise<void> {
  const messages = [{ role: 'user' as const, content: 'Think, then answer.' }];
  // Harmony's markers are several tokens each on the grafted vocabulary: room for them.
  const body = { model, messages, max_tokens: 120, temperature: 0, grammar: thinking.grammar } as OpenAI.ChatCompletionCreateParamsNonStreaming;
  const whole = await client.chat.completions.create(body);
  const message = whole.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  expect(message.reasoning_content).toBe('plan the steps');
  expect(message.content).toBe('the answer');

  // Streamed: every reasoning delta before the first content delta, the same text in the end.
  const stream = await client.chat.completions.create({ ...body, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming);
  const order: string[] = [];
  let reasoning = '';
  let content = '';
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
    if (delta?.reasoning_content) {
      reasoning += delta.reasoning_content;
      if (order.at(-1) !== 'reasoning') order.push('reasoning');
    }
    if (delta?.content) {
      content += delta.content;
      if (order.at(-1) !== 'content') order.push('content');
    }
  }
  expect({ reasoning, content, order }).toEqual({ reasoning: 'plan the steps', content: 'the answer', order: ['reasoning', 'content'] });

  // reasoning_format "none": the raw text in content, no reasoning_content.
  const raw = await client.chat.completions.create({ ...body, reasoning_format: 'none' } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  const rawMessage = raw.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
  expect(rawMessage.reasoning_content).toBeUndefined();
  expect(rawMessage.content).toContain('plan the steps');
  expect(rawMessage.content).toContain('the answer');
}

describe.each(engineKinds('model families'))('model families on a $kind engine', ({ kind, present }) => {
  it.skipIf(!present).each(FAMILIES)('%s: a two-turn chat reuses its prefix, a forced call validates, thinking is apart', async (family) => {
    const model = await ensureFamilyModel(family);
    const served = await startServed({ model, replicas: 1, engine: { kind, contextSize: 2048, slots: 1, threads: 1 } });
    try {
      const client = clientOf(served);
      const id = served.workstation.modelId;
      await checkChatAndTools(client, id);
      const tags = served.workstation.tokenizer.thinking;
      if (tags) {
        const { thinkingOpen } = await served.workstation.tokenizer.applyChatTemplate([{ role: 'user', content: 'Think, then answer.' }]);
        await checkThinking(client, id, { grammar: thinkingGrammar(tags, thinkingOpen) });
      }
      expect(served.workstation.tokenizer.thinking !== null).toBe(THINKS.has(family));
      if (FORMATS[family]) expect(served.workstation.tokenizer.toolSupport.format).toBe(FORMATS[family]);
    } finally {
      await served.close();
    }
  });
});

describe('thinking turned off', () => {
  it('renders Qwen3 with an empty thinking block when enable_thinking is false or reasoning_effort is none', async () => {
    const served = await startServed({ model: await ensureFamilyModel('qwen3'), replicas: 1, engine: { contextSize: 1024, slots: 1, threads: 1 } });
    const client = clientOf(served);
    const base = { model: served.workstation.modelId, messages: [{ role: 'user' as const, content: 'Hi' }], max_tokens: 1, temperature: 0 };
    const on = await client.chat.completions.create(base);
    const off = await client.chat.completions.create({
      ...base,
      chat_template_kwargs: { enable_thinking: false },
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const none = await client.chat.completions.create({ ...base, reasoning_effort: 'none' } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    // Qwen3's template closes an empty `<think>\n\n</think>\n\n` block when thinking is off: 4 more tokens.
    expect(off.usage!.prompt_tokens).toBe(on.usage!.prompt_tokens + 4);
    expect(none.usage!.prompt_tokens).toBe(off.usage!.prompt_tokens);
    const bad = await client.chat.completions
      .create({ ...base, chat_template_kwargs: { enable_thinking: 'no' } } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400 });
  });
});

describe.each(engineKinds('the thinking budget'))('the thinking budget on a $kind engine', ({ kind, present }) => {
  it.skipIf(!present)('ends the thinking after the budget and the answer goes on; 0 ends it at once', async () => {
    // DeepSeek-R1-Distill's generation prompt opens <think>; the random model never closes it by itself.
    const served = await startServed({
      model: await ensureFamilyModel('deepseek-r1-distill-llama'),
      replicas: 1,
      engine: { kind, contextSize: 1024, slots: 1, threads: 1 },
    });
    const client = clientOf(served);
    const base = { model: served.workstation.modelId, messages: [{ role: 'user' as const, content: 'Think.' }], max_tokens: 40, temperature: 0 };
    type Thought = OpenAI.ChatCompletionMessage & { reasoning_content?: string };
    const unbounded = (await client.chat.completions.create(base)).choices[0]!.message as Thought;
    expect(unbounded.reasoning_content?.length).toBeGreaterThan(0);
    expect(unbounded.content).toBe('');
    const bounded = (await client.chat.completions.create({ ...base, thinking_budget_tokens: 8 } as OpenAI.ChatCompletionCreateParamsNonStreaming)).choices[0]!
      .message as Thought;
    expect(bounded.reasoning_content?.length).toBeGreaterThan(0);
    expect(bounded.reasoning_content!.length).toBeLessThan(unbounded.reasoning_content!.length);
    expect(bounded.content?.length).toBeGreaterThan(0);
    const none = (await client.chat.completions.create({ ...base, reasoning_budget_tokens: 0 } as OpenAI.ChatCompletionCreateParamsNonStreaming)).choices[0]!
      .message as Thought;
    expect(none.reasoning_content).toBeUndefined();
    expect(none.content?.length).toBeGreaterThan(0);
  });
});
