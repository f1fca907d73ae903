/**
 * `store: true` on a chat completion, with the official `openai` client against a served workstation
 * (node-llama-cpp engine, the generated model): a tool round trip stored whole and streamed is listed,
 * through the contract calls the chat window makes, as conversations from the API holding the call and
 * the tool result as structured messages, and the window continues one; `store` absent stores nothing,
 * and neither does a request that fails.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { contract, type CallName, type CallResult } from '../../common/contract.js';
import { contractHandlers, invokeCall } from '../../core/contract-handlers.js';
import { startServed } from '../helpers/served.js';

const weather: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } }, required: ['city'], additionalProperties: false },
  },
};

describe('store: true on chat completions', () => {
  it('keeps a tool round trip as a conversation from the API, and nothing when store is absent or the request fails', async () => {
    const served = await startServed({ replicas: 1, engine: { contextSize: 2048, slots: 2, threads: 1 } });
    const client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const handlers = contractHandlers(served.workstation);
    /** A contract call as the window makes it, its result checked against the contract. */
    const call = async <N extends CallName>(name: N, args: unknown): Promise<CallResult<N>> =>
      contract.calls[name].result.parse(await invokeCall(handlers, name, args)) as CallResult<N>;
    const base = { model: served.workstation.modelId, temperature: 0 };
    const question: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You answer about weather.' },
      { role: 'user', content: 'What is the weather in Paris?' },
    ];

    // store absent, and store false: nothing is kept.
    await client.chat.completions.create({ ...base, max_tokens: 2, messages: question });
    await client.chat.completions.create({ ...base, max_tokens: 2, messages: question, store: false });
    expect(await call('listConversations', {})).toEqual([]);

    // A request that fails stores nothing: refused by its schema, and refused after its prompt was made.
    await expect(client.chat.completions.create({ ...base, messages: question, store: true, n: 2 })).rejects.toMatchObject({ status: 400, param: 'n' });
    const tooLong = [{ role: 'user' as const, content: 'word '.repeat(3000) }];
    await expect(client.chat.completions.create({ ...base, messages: tooLong, store: true })).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
    expect(await call('listConversations', {})).toEqual([]);

    // The forced call, whole, stored.
    const forced = await client.chat.completions.create({
      ...base,
      max_tokens: 100,
      messages: question,
      tools: [weather],
      tool_choice: 'required',
      store: true,
    });
    const toolCall = forced.choices[0]!.message.tool_calls![0]!;
    if (toolCall.type !== 'function') throw new Error('a function call was forced');
    const listed = await call('listConversations', {});
    expect(listed).toEqual([expect.objectContaining({ title: 'What is the weather in Paris?', messages: 2, source: 'api', damaged: null })]);
    const first = await call('getConversation', { id: listed[0]!.id });
    expect(first.systemPrompt).toBe('You answer about weather.');
    expect(first.messages.map((m) => [m.role, m.content, m.toolCalls ?? null, m.finishReason ?? null])).toEqual([
      ['user', 'What is the weather in Paris?', null, null],
      ['assistant', '', [{ id: toolCall.id, name: 'get_weather', arguments: toolCall.function.arguments }], 'tool_calls'],
    ]);
    expect(JSON.parse(first.messages[1]!.toolCalls![0]!.arguments)).toMatchObject({ city: expect.stringMatching(/^(Paris|Rome)$/) });

    // The tool's result and the answer, streamed, stored.
    const result = JSON.stringify({ temperature: 21 });
    const stream = await client.chat.completions.create({
      ...base,
      max_tokens: 6,
      stream: true,
      store: true,
      tools: [weather],
      messages: [...question, { role: 'assistant', content: null, tool_calls: [toolCall] }, { role: 'tool', tool_call_id: toolCall.id, content: result }],
    });
    let answer = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      answer += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    const both = await call('listConversations', {});
    expect(both).toHaveLength(2);
    const roundTrip = await call('getConversation', { id: both.find((c) => c.messages === 4)!.id });
    expect(roundTrip.source).toBe('api');
    expect(roundTrip.messages.map((m) => ({ role: m.role, content: m.content, toolCalls: m.toolCalls, toolCallId: m.toolCallId }))).toEqual([
      { role: 'user', content: 'What is the weather in Paris?', toolCalls: undefined, toolCallId: undefined },
      { role: 'assistant', content: '', toolCalls: [{ id: toolCall.id, name: 'get_weather', arguments: toolCall.function.arguments }], toolCallId: undefined },
      { role: 'tool', content: result, toolCalls: undefined, toolCallId: toolCall.id },
      { role: 'assistant', content: answer, toolCalls: undefined, toolCallId: undefined },
    ]);
    expect(roundTrip.messages[3]).toMatchObject({ finishReason: finish, servedBy: { replica: expect.any(Number), completionTokens: expect.any(Number) } });

    // The window continues it: its tool turns render as text turns the template takes.
    const next = await call('sendMessage', { id: roundTrip.id, content: 'And in Rome?' });
    expect(next).toMatchObject({ role: 'assistant', error: null, state: 'complete' });
    expect(next.servedBy).not.toBeNull();
    expect((await call('getConversation', { id: roundTrip.id })).messages).toHaveLength(6);
  });
});
