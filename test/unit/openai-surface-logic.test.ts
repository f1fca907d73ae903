/**
 * The OpenAI front's request surface, as pure logic: strict schemas (an unknown or unsupported
 * parameter is a 400 naming it as `param`), the accepted-and-ignored list, the sampling fields mapped to
 * the engine request (user → conversation), the names that select the model, base64 vectors.
 */
import { describe, expect, it } from 'vitest';
import { base64Vector } from '../../core/http/embeddings-route.js';
import { HttpError, parseRequest } from '../../core/http/http-error.js';
import { namesOf, notServed, selectsModel } from '../../core/http/model-names.js';
import { generateRequest } from '../../core/http/generation-request.js';
import { chatCompletionRequestSchema, completionRequestSchema, embeddingRequestSchema, IGNORED_FIELDS } from '../../core/http/openai-schemas.js';

const chat = { messages: [{ role: 'user', content: 'hi' }] };

function refusal(schema: Parameters<typeof parseRequest>[0], body: unknown): HttpError {
  try {
    parseRequest(schema, body);
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

describe('strict OpenAI request schemas', () => {
  it('refuse an unknown parameter with a 400 naming it as param, at the top and inside a message', () => {
    const top = refusal(chatCompletionRequestSchema, { ...chat, modalities: ['audio'] });
    expect(top).toMatchObject({ status: 400, param: 'modalities', type: 'invalid_request_error' });
    expect(top.message).toMatch(/^modalities: not a parameter this server takes/);
    expect(refusal(chatCompletionRequestSchema, { messages: [{ role: 'user', content: 'hi', audio: {} }] }).param).toBe('messages[0].audio');
    expect(refusal(completionRequestSchema, { prompt: 'a', functions: [] }).param).toBe('functions');
    const long = refusal(completionRequestSchema, { prompt: 'a', ['x'.repeat(300)]: 1 });
    expect(long.message.length).toBeLessThan(200);
  });

  it("take llama-server's thinking fields and refuse their wrong values by name", () => {
    const thinking = {
      ...chat,
      reasoning_format: 'none',
      chat_template_kwargs: { enable_thinking: false },
      reasoning_effort: 'high',
      thinking_budget_tokens: 0,
      messages: [{ role: 'assistant', content: 'hi', reasoning_content: 'a thought' }],
    };
    expect(chatCompletionRequestSchema.parse(thinking)).toMatchObject({ reasoning_format: 'none', chat_template_kwargs: { enable_thinking: false } });
    expect(refusal(chatCompletionRequestSchema, { ...chat, reasoning_format: 'verbose' }).param).toBe('reasoning_format');
    expect(refusal(chatCompletionRequestSchema, { ...chat, chat_template_kwargs: { enable_thinking: 'no' } }).param).toBe('chat_template_kwargs');
    expect(refusal(chatCompletionRequestSchema, { ...chat, thinking_budget_tokens: -2 }).param).toBe('thinking_budget_tokens');
  });

  it('refuse logprobs out of range by name', () => {
    expect(refusal(completionRequestSchema, { prompt: 'a', logprobs: 21 }).param).toBe('logprobs');
    expect(refusal(chatCompletionRequestSchema, { ...chat, logprobs: true, top_logprobs: 21 }).param).toBe('top_logprobs');
  });

  it('accept and ignore the documented fields, still checking their types', () => {
    const body = {
      ...chat,
      store: false,
      metadata: { app: 'x' },
      service_tier: 'auto',
      safety_identifier: 'h',
      user: 'u',
      messages: [{ role: 'user', content: 'hi', name: 'bob' }],
    };
    expect(() => parseRequest(chatCompletionRequestSchema, body)).not.toThrow();
    expect(Object.keys(IGNORED_FIELDS).sort()).toEqual(['metadata', 'safety_identifier', 'service_tier']);
    expect(refusal(chatCompletionRequestSchema, { ...chat, metadata: 'x' }).param).toBe('metadata');
  });

  it('take store on chat completions, checked for its type, and refuse it on text completions (nothing there is a conversation)', () => {
    expect(parseRequest(chatCompletionRequestSchema, { ...chat, store: true }).store).toBe(true);
    expect(refusal(chatCompletionRequestSchema, { ...chat, store: 'yes' }).param).toBe('store');
    expect(refusal(completionRequestSchema, { prompt: 'a', store: true }).param).toBe('store');
  });

  it('refuse n > 1, best_of, echo and suffix in words', () => {
    expect(refusal(chatCompletionRequestSchema, { ...chat, n: 2 }).message).toMatch(/^n: one choice per request/);
    expect(refusal(completionRequestSchema, { prompt: 'a', echo: true }).param).toBe('echo');
    expect(refusal(completionRequestSchema, { prompt: 'a', suffix: 'z' }).param).toBe('suffix');
    expect(refusal(completionRequestSchema, { prompt: 'a', best_of: 3 }).param).toBe('best_of');
    expect(() => parseRequest(completionRequestSchema, { prompt: 'a', echo: false, n: 1, best_of: 1 })).not.toThrow();
  });

  it('take the penalties and logit_bias in OpenAI’s ranges and map them, with user as the conversation', () => {
    const body = parseRequest(completionRequestSchema, {
      prompt: 'a',
      presence_penalty: 1.5,
      frequency_penalty: -0.5,
      logit_bias: { '42': 100, '7': -100 },
      repeat_penalty: 1.1,
      repeat_last_n: 32,
      user: 'alice',
    });
    const request = generateRequest(body, [1, 2], 5);
    expect(request.conversationId).toBe('alice');
    expect(request.sampling).toMatchObject({ presencePenalty: 1.5, frequencyPenalty: -0.5, repeatPenalty: 1.1, repeatLastN: 32 });
    expect(new Map(request.sampling!.logitBias)).toEqual(
      new Map([
        [42, 100],
        [7, -100],
      ]),
    );
    expect(generateRequest(parseRequest(completionRequestSchema, { prompt: 'a', user: 'alice', prompt_cache_key: 'c1' }), [1], 1).conversationId).toBe('c1');
    expect(generateRequest(parseRequest(completionRequestSchema, { prompt: 'a' }), [1], 1)).not.toHaveProperty('conversationId');
    expect(refusal(completionRequestSchema, { prompt: 'a', presence_penalty: 3 }).message).toBe('presence_penalty: at most 2 (got 3)');
    expect(refusal(completionRequestSchema, { prompt: 'a', logit_bias: { '5': 101 } }).param).toBe('logit_bias.5');
    expect(refusal(completionRequestSchema, { prompt: 'a', logit_bias: { hello: 1 } }).param).toMatch(/^logit_bias/);
  });

  it('take embeddings inputs as strings or token ids, and refuse dimensions by name', () => {
    for (const input of ['x', ['a', 'b'], [1, 2], [[1], [2, 3]]]) expect(() => parseRequest(embeddingRequestSchema, { input })).not.toThrow();
    expect(refusal(embeddingRequestSchema, { input: 'x', dimensions: 8 })).toMatchObject({
      param: 'dimensions',
      message: "dimensions: is not supported: the model's embeddings have one fixed size",
    });
    expect(refusal(embeddingRequestSchema, { input: '' }).param).toBe('input');
    expect(refusal(embeddingRequestSchema, { input: 'x', encoding_format: 'int8' }).param).toBe('encoding_format');
  });
});

describe('model names', () => {
  const model = { id: 'qwen-7b-q4', path: '/models/qwen-7b-q4.gguf', aliases: ['gpt-4o', 'local'] };

  it('select the model by its id, file name, "default" and aliases, and nothing else', () => {
    for (const name of ['qwen-7b-q4', 'qwen-7b-q4.gguf', 'default', 'gpt-4o', 'local']) expect(selectsModel(model, name), name).toBe(true);
    for (const name of ['', 'qwen', 'QWEN-7B-Q4', '/models/qwen-7b-q4.gguf']) expect(selectsModel(model, name), name).toBe(false);
    expect(namesOf(model)).toEqual(['qwen-7b-q4', 'qwen-7b-q4.gguf', 'default', 'gpt-4o', 'local']);
    expect(notServed(model, 'x')).toBe('model "x" not found; this server serves "qwen-7b-q4" (also named "qwen-7b-q4.gguf", "default", "gpt-4o", "local")');
  });

  it('select nothing when no model is loaded', () => {
    const none = { id: '', path: null, aliases: [] };
    expect(namesOf(none)).toEqual([]);
    expect(selectsModel(none, 'default')).toBe(false);
    expect(notServed(none, 'm')).toBe('model "m" not found; no model is loaded');
  });
});

describe('base64 vectors', () => {
  it('are the little-endian float32 bytes OpenAI sends', () => {
    const vector = [0.5, -1.25, 3];
    const bytes = Buffer.from(base64Vector(vector), 'base64');
    expect([...new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)]).toEqual(vector);
  });
});
