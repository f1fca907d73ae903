/**
 * Tool calling through the OpenAI front, with the official `openai` client, on a node-llama-cpp engine and
 * on a llama-server child (the same prompt rendering and call parsing in Manifold's front for both; the
 * forced call's grammar passed to the engine): a forced call (a named function, and "required") whose
 * arguments parse against the tool's schema, the tool's result sent back and an answer, whole and
 * streamed (delta.tool_calls accumulated); "none" offers no tools; "auto" reads a call the model writes
 * (made to write one by llama-server's `grammar` extension); parallel_tool_calls false keeps one call; a
 * forced call refuses another constraint; the second turn reuses the first turn's prefix (cached_tokens).
 * And the Vercel AI SDK's `generateText` with a required tool, unchanged.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, jsonSchema, tool } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startServed } from '../helpers/served.js';

type Served = Awaited<ReturnType<typeof startServed>>;
type Message = OpenAI.ChatCompletionMessageParam;

const clientOf = (served: Served): OpenAI => new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });

/** The tools' parameter schemas (enums and booleans and a bounded string: what a grammar holds a random model to), and the same as zod. */
const weatherParameters = {
  type: 'object',
  properties: { city: { type: 'string', enum: ['Paris', 'Rome', 'Oslo'] }, metric: { type: 'boolean' }, note: { type: 'string', maxLength: 8 } },
  required: ['city', 'metric', 'note'],
  additionalProperties: false,
};
const weatherArguments = z.object({ city: z.enum(['Paris', 'Rome', 'Oslo']), metric: z.boolean(), note: z.string().max(8) }).strict();
const timeArguments = z.object({ zone: z.enum(['UTC', 'CET']) }).strict();
const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: weatherParameters } },
  {
    type: 'function',
    function: {
      name: 'get_time',
      description: 'The time in a zone',
      parameters: { type: 'object', properties: { zone: { type: 'string', enum: ['UTC', 'CET'] } } },
    },
  },
];
const argumentsOf = { get_weather: weatherArguments, get_time: timeArguments } as const;

interface Call {
  id: string;
  name: string;
  arguments: string;
}

const callsOf = (message: OpenAI.ChatCompletionMessage): Call[] =>
  (message.tool_calls ?? []).map((call) => {
    if (call.type !== 'function') throw new Error(`a ${call.type} call`);
    return { id: call.id, name: call.function.name, arguments: call.function.arguments };
  });

/** Each call names one of the tools and its arguments parse against that tool's schema. */
function expectValidCalls(calls: Call[]): void {
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    expect(call.id).toMatch(/^call_\w+$/);
    expect(Object.keys(argumentsOf)).toContain(call.name);
    expect(() => argumentsOf[call.name as keyof typeof argumentsOf].parse(JSON.parse(call.arguments)), call.arguments).not.toThrow();
  }
}

const assistantTurn = (calls: Call[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
});
const toolResults = (calls: Call[]): Message[] =>
  calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: JSON.stringify({ temperature: 21, for: c.name }) }));

/** A streamed answer: its content, its calls put together from delta.tool_calls fragments, its finish reason. */
async function streamed(
  client: OpenAI,
  params: Omit<OpenAI.ChatCompletionCreateParamsStreaming, 'stream'>,
): Promise<{ content: string; calls: Call[]; finish: string | null }> {
  const stream = await client.chat.completions.create({ ...params, stream: true });
  let content = '';
  let finish: string | null = null;
  const calls: Call[] = [];
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    content += choice.delta.content ?? '';
    for (const fragment of choice.delta.tool_calls ?? []) {
      if (fragment.id !== undefined) {
        // The first fragment of a call: index, id, type and name, with empty arguments.
        expect(fragment).toMatchObject({ index: calls.length, type: 'function', function: { arguments: '' } });
        calls.push({ id: fragment.id, name: fragment.function!.name!, arguments: '' });
      } else {
        calls[fragment.index]!.arguments += fragment.function?.arguments ?? '';
      }
    }
    finish = choice.finish_reason ?? finish;
  }
  return { content, calls, finish };
}

/** The tool behaviours, on whatever engine serves `client`. */
async function checkTools(client: OpenAI, model: string, tag: string): Promise<void> {
  const question: Message[] = [{ role: 'user', content: `What is the weather in Paris? (${tag})` }];
  const base = { model, max_tokens: 300, temperature: 0 };

  // A named function, whole: only the call comes back (one: a named function is called once), finish_reason tool_calls.
  const forced = await client.chat.completions.create({
    ...base,
    messages: question,
    tools,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  const choice = forced.choices[0]!;
  expect(choice.finish_reason).toBe('tool_calls');
  expect(choice.message.content).toBeNull();
  const calls = callsOf(choice.message);
  expect(calls).toHaveLength(1);
  expect(calls[0]!.name).toBe('get_weather');
  expectValidCalls(calls);

  // The result goes back and the model answers; the second turn reuses the first's prefix.
  const answer = await client.chat.completions.create({ ...base, max_tokens: 6, messages: [...question, assistantTurn(calls), ...toolResults(calls)], tools });
  expect(answer.choices[0]!.message.content).toBeTypeOf('string');
  expect(answer.usage!.prompt_tokens).toBeGreaterThan(forced.usage!.prompt_tokens);
  expect(answer.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(forced.usage!.prompt_tokens / 2);

  // "required", streamed: fragments put together make valid calls; the round trip streamed too.
  const required = await streamed(client, { ...base, messages: [{ role: 'user', content: `Weather or time? (${tag})` }], tools, tool_choice: 'required' });
  expect(required.finish).toBe('tool_calls');
  expect(required.content).toBe('');
  expectValidCalls(required.calls);
  const streamedAnswer = await streamed(client, {
    ...base,
    max_tokens: 6,
    messages: [{ role: 'user', content: `Weather or time? (${tag})` }, assistantTurn(required.calls), ...toolResults(required.calls)],
    tools,
  });
  expect(streamedAnswer.calls).toEqual([]);
  expect(streamedAnswer.content.length).toBeGreaterThan(0);

  // "none": the tools are not offered (a shorter prompt) and nothing is read as a call.
  const offered = await client.chat.completions.create({ ...base, max_tokens: 2, messages: question, tools, tool_choice: 'auto' });
  const none = await client.chat.completions.create({ ...base, max_tokens: 2, messages: question, tools, tool_choice: 'none' });
  expect(none.usage!.prompt_tokens).toBeLessThan(offered.usage!.prompt_tokens - 50);
  expect(none.choices[0]!.message.tool_calls).toBeUndefined();

  // "auto": a call the model writes is read as a call (llama-server's `grammar` makes the random model write two).
  const two = `<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome", "metric": true, "note": "x"}}\n</tool_call>`;
  const grammar = `root ::= ${JSON.stringify(two)}`;
  const auto = await client.chat.completions.create({ ...base, messages: question, tools, grammar } as OpenAI.ChatCompletionCreateParamsNonStreaming);
  expect(auto.choices[0]!.finish_reason).toBe('tool_calls');
  expect(callsOf(auto.choices[0]!.message).map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
    ['get_time', { zone: 'UTC' }],
    ['get_weather', { city: 'Rome', metric: true, note: 'x' }],
  ]);
  // parallel_tool_calls false keeps the first, streamed as whole.
  const one = await streamed(client, { ...base, messages: question, tools, grammar, parallel_tool_calls: false } as Omit<
    OpenAI.ChatCompletionCreateParamsStreaming,
    'stream'
  >);
  expect(one.calls.map((c) => c.name)).toEqual(['get_time']);
  expect(one.finish).toBe('tool_calls');

  // A forced call cannot carry another constraint on the same answer.
  for (const [field, value] of [
    ['grammar', 'root ::= "x"'],
    ['response_format', { type: 'json_object' }],
  ] as const) {
    const error = await client.chat.completions
      .create({ ...base, messages: question, tools, tool_choice: 'required', [field]: value } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(error, field).toMatchObject({ status: 400, param: field });
  }
  // ignore_eos has nothing to do once a forced call is complete: refused by name, like with any grammar.
  const endless = await client.chat.completions
    .create({ ...base, messages: question, tools, tool_choice: 'required', ignore_eos: true } as OpenAI.ChatCompletionCreateParamsNonStreaming)
    .catch((e: unknown) => e);
  expect(endless).toMatchObject({ status: 400, param: 'ignore_eos' });
  // A forced call's parameters are held to what the grammar expresses, as response_format's schema is.
  const patterned = [
    { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]+$' } } } } },
  ];
  const unsupported = await client.chat.completions.create({ ...base, messages: question, tools: patterned, tool_choice: 'required' }).catch((e: unknown) => e);
  expect(unsupported).toMatchObject({ status: 400, param: 'tools', code: 'unsupported_schema_keyword' });
  expect((unsupported as Error).message).toContain('"pattern" at #/properties/arguments/properties/code');
}

describe('tool calling on node-llama-cpp engines', () => {
  it('forces, reads and streams calls, takes tool results back, and honours tool_choice and parallel_tool_calls', async () => {
    // 2,048 tokens a slot: the tools' system prompt is ~800 tokens, and a round trip adds the call and its result.
    const served = await startServed({ engine: { contextSize: 2048, slots: 2, threads: 1 } });
    await checkTools(clientOf(served), served.workstation.modelId, 'node-llama-cpp');
  });

  it('serves the Vercel AI SDK’s generateText with a required tool, unchanged', async () => {
    const served = await startServed({ replicas: 1 });
    const provider = createOpenAICompatible({ name: 'manifold', baseURL: `${served.front.url}/v1` });
    const result = await generateText({
      model: provider.chatModel(served.workstation.modelId),
      prompt: 'What is the weather in Oslo?',
      tools: {
        get_weather: tool({
          description: 'The weather in a city',
          inputSchema: jsonSchema<z.infer<typeof weatherArguments>>(weatherParameters as Parameters<typeof jsonSchema>[0]),
        }),
      },
      toolChoice: 'required',
      maxOutputTokens: 300,
      temperature: 0,
      maxRetries: 0,
    });
    expect(result.finishReason).toBe('tool-calls');
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]!.toolName).toBe('get_weather');
    expect(() => weatherArguments.parse(result.toolCalls[0]!.input)).not.toThrow();
  });
});

describe('tool calling on a llama-server child', () => {
  it('behaves the same: the front renders and parses, the engine takes the grammar', async () => {
    const served = await startServed({ replicas: 1, engine: { kind: 'llama-server', contextSize: 2048, slots: 2, threads: 1 } });
    await checkTools(clientOf(served), served.workstation.modelId, 'llama-server');
  });
});
