/**
 * Refusals in words: each bad OpenAI request body gets one message naming the field, the value's problem
 * and the limit (never zod's issue list), over-long token budgets are clamped, and no body the OpenAI
 * schemas accept can fail the engine protocol's schema (a 500 at the engine boundary before).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateRequestSchema, MAX_GENERATE_TOKENS } from '../../common/engine-protocol.js';
import { inWords } from '../../common/issue-words.js';
import { HttpError, parseRequest } from '../../core/http/http-error.js';
import { generateRequest } from '../../core/http/generation-request.js';
import { chatCompletionRequestSchema, completionRequestSchema, embeddingRequestSchema, type SamplingRequest } from '../../core/http/openai-schemas.js';
import { fuzzBody, seededRandom } from '../helpers/request-fuzz.js';

const chat = { messages: [{ role: 'user', content: 'hi' }] };

function refusal(schema: z.ZodType, body: unknown): HttpError {
  try {
    parseRequest(schema, body);
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('the body was accepted');
}
const chatRefusal = (body: unknown): string => refusal(chatCompletionRequestSchema, body).message;
const textRefusal = (body: unknown): string => refusal(completionRequestSchema, body).message;

describe('OpenAI request refusals in words', () => {
  it('names a stop string over the engine’s limit, and too many of them', () => {
    expect(chatRefusal({ ...chat, stop: ['ok', 'x'.repeat(300)] })).toBe('stop[1]: a stop string is at most 256 characters (got 300)');
    expect(chatRefusal({ ...chat, stop: 'x'.repeat(257) })).toBe('stop: a stop string is at most 256 characters (got 257)');
    expect(chatRefusal({ ...chat, stop: Array.from({ length: 17 }, () => '.') })).toBe('stop: at most 16 stop strings (got 17)');
    expect(chatRefusal({ ...chat, stop: [''] })).toBe('stop[0]: a stop string must not be empty');
    expect(chatRefusal({ ...chat, stop: 5 })).toBe('stop: expected a string or an array of at most 16 strings; got 5');
    expect(refusal(chatCompletionRequestSchema, { ...chat, stop: [1] }).param).toBe('stop');
  });

  it('clamps max_tokens and max_completion_tokens to what the engine takes; refuses what is not a token count', () => {
    const clamped = (schema: z.ZodType, body: unknown) => parseRequest(schema, body) as { max_tokens?: number; max_completion_tokens?: number };
    expect(clamped(chatCompletionRequestSchema, { ...chat, max_tokens: 2_000_000 }).max_tokens).toBe(MAX_GENERATE_TOKENS);
    expect(clamped(chatCompletionRequestSchema, { ...chat, max_completion_tokens: 2_000_000 }).max_completion_tokens).toBe(MAX_GENERATE_TOKENS);
    expect(clamped(completionRequestSchema, { prompt: 'x', max_tokens: 1_048_577 }).max_tokens).toBe(MAX_GENERATE_TOKENS);
    expect(clamped(completionRequestSchema, { prompt: 'x', max_tokens: 12 }).max_tokens).toBe(12);
    expect(chatRefusal({ ...chat, max_tokens: 0 })).toBe('max_tokens: at least 1 (got 0)');
    expect(chatRefusal({ ...chat, max_tokens: 1.5 })).toBe('max_tokens: expected a whole number, got 1.5');
    expect(chatRefusal({ ...chat, max_tokens: 'NaN' })).toBe('max_tokens: expected a number, got "NaN"');
    expect(chatRefusal({ ...chat, max_tokens: 1e300 })).toBe('max_tokens: at most 9007199254740991 (got 1e+300)');
    expect(chatRefusal({ ...chat, max_tokens: Infinity })).toBe('max_tokens: expected a number, got Infinity');
  });

  it('words unions, types, enums and ranges', () => {
    expect(textRefusal({ prompt: { text: 'x' } })).toBe(
      'prompt: expected a string, an array of one string, or an array of token ids (whole numbers ≥ 0); got an object',
    );
    expect(textRefusal({ prompt: [1.5] })).toBe('prompt[0]: a token id is a whole number ≥ 0 (got 1.5)');
    expect(textRefusal({ prompt: [-1] })).toBe('prompt[0]: a token id is a whole number ≥ 0 (got -1)');
    expect(textRefusal({ prompt: ['a', 'b'] })).toBe('prompt: exactly 1 item (got 2)');
    expect(textRefusal({ prompt: [null] })).toBe(
      'prompt: expected a string, an array of one string, or an array of token ids (whole numbers ≥ 0); got an array of 1 item',
    );
    expect(refusal(embeddingRequestSchema, { input: [[]] }).message).toBe('input[0]: at least 1 token id (got 0)');
    expect(refusal(embeddingRequestSchema, { input: [[1], [2, -2]] }).message).toBe('input[1][1]: a token id is a whole number ≥ 0 (got -2)');
    expect(textRefusal({})).toBe('prompt: expected a string, an array of one string, or an array of token ids (whole numbers ≥ 0); got nothing');
    expect(chatRefusal({ messages: [{ role: 'function', content: 'x' }] })).toBe(
      'messages[0].role: must be one of "system", "developer", "user", "assistant", "tool" (got "function")',
    );
    expect(chatRefusal({ messages: [{ role: 'tool', content: 'x' }] })).toBe(
      'messages[0].tool_call_id: a tool message needs the tool_call_id of the call it answers',
    );
    expect(chatRefusal({ messages: [{ role: 'user', content: 'x', tool_calls: [] }] })).toBe(
      'messages[0].tool_calls: only an assistant message carries tool_calls',
    );
    expect(chatRefusal({ ...{ messages: [{ role: 'user', content: 'x' }] }, tool_choice: 'required' })).toBe(
      'tool_choice: tool_choice forces a call, so it needs tools',
    );
    expect(
      chatRefusal({
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'a' } }],
        tool_choice: { type: 'function', function: { name: 'b' } },
      }),
    ).toBe('tool_choice: names "b", which is not among the tools');
    expect(chatRefusal({ messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'a b' } }] })).toBe(
      'tools[0].function.name: a function name is 1 to 64 letters, digits, underscores or dashes',
    );
    expect(chatRefusal({ messages: [{ role: 'user', content: 5 }] })).toBe(
      'messages[0].content: expected a string, an array of text parts ({"type": "text", "text": …}) or null; got 5',
    );
    expect(chatRefusal({ messages: [{ role: 'user', content: [{ type: 'image_url' }] }] })).toBe(
      'messages[0].content[0].type: must be "text" (got "image_url")',
    );
    expect(chatRefusal({ messages: [] })).toBe('messages: at least 1 item (got 0)');
    expect(chatRefusal({})).toBe('messages: is required (an array)');
    expect(chatRefusal({ ...chat, temperature: 3 })).toBe('temperature: at most 2 (got 3)');
    expect(chatRefusal({ ...chat, seed: -1 })).toBe('seed: at least 0 (got -1)');
    expect(chatRefusal({ ...chat, n: 2 })).toBe('n: one choice per request; send several requests for several answers (each is routed on its own)');
    expect(chatRefusal({ ...chat, stream: 'yes' })).toBe('stream: expected true or false, got "yes"');
    expect(chatRefusal({ ...chat, top_k: 'x'.repeat(100) })).toBe('top_k: expected a number, got a string of 100 characters');
    expect(chatRefusal([chat])).toBe('the request body: expected an object, got an array of 1 item');
    expect(chatRefusal(null)).toBe('the request body: expected an object, got null');
  });

  it('never shows zod’s issue list, and every accepted body passes the engine protocol', () => {
    const random = seededRandom(7);
    let accepted = 0;
    for (let i = 0; i < 5000; i++) {
      const { path, text } = fuzzBody(random);
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        continue;
      }
      const schema = path === '/v1/chat/completions' ? chatCompletionRequestSchema : completionRequestSchema;
      const parsed = schema.safeParse(raw, { error: inWords });
      if (!parsed.success) {
        const message = refusal(schema, raw).message;
        expect(message).not.toMatch(/^\s*[[{]|"code"|"path"|Invalid input|Too (big|small)/);
        expect(message).toMatch(/^[\w[\].]*[a-z_\]]: |^the request body: /);
        continue;
      }
      accepted++;
      const body = parsed.data as SamplingRequest;
      const maxTokens = 'messages' in body ? (body.max_completion_tokens ?? body.max_tokens) : body.max_tokens;
      const engine = generateRequestSchema.safeParse(generateRequest(body, [1, 2, 3], maxTokens));
      expect(engine.success, text.slice(0, 200)).toBe(true);
    }
    expect(accepted).toBeGreaterThan(100);
  });
});
