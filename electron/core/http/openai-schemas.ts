/**
 * The OpenAI-compatible request bodies, as zod schemas. Fields OpenAI clients send that Manifold does not
 * use are accepted and ignored (as llama-server does); `top_k`, `min_p`, `repeat_penalty`,
 * `ignore_eos` and `return_tokens` are llama-server's extensions.
 *
 * Every limit of the engine protocol (`generateRequestSchema`) is checked here first, with a message in
 * words, so no body can fail at the engine boundary: `max_tokens` / `max_completion_tokens` above what
 * the protocol takes are clamped to it (as llama-server clamps to what the context holds; the engine then
 * caps by what the slot can still hold), stop strings over the protocol's count or length are refused.
 * Parse with `parseRequest` (http-error.ts) so every other refusal is in words too.
 */
import { z } from 'zod';
import { MAX_GENERATE_TOKENS, MAX_STOP_LENGTH, MAX_STOP_STRINGS } from '../../../common/engine-protocol.js';
import { expectedOneOf } from '../../../common/issue-words.js';

const lengthOf = (input: unknown): number => (typeof input === 'string' || Array.isArray(input) ? input.length : 0);

const stopStringSchema = z
  .string()
  .min(1, 'a stop string must not be empty')
  .max(MAX_STOP_LENGTH, { error: (issue) => `a stop string is at most ${MAX_STOP_LENGTH} characters (got ${lengthOf(issue.input)})` });

const stopSchema = z
  .union([stopStringSchema, z.array(stopStringSchema).max(MAX_STOP_STRINGS, { error: (issue) => `at most ${MAX_STOP_STRINGS} stop strings (got ${lengthOf(issue.input)})` })], {
    error: expectedOneOf(`a string or an array of at most ${MAX_STOP_STRINGS} strings`),
  })
  .nullish();

/** A token budget: a whole number ≥ 1, clamped to the most the engine protocol takes. */
const maxTokensSchema = z
  .number()
  .int()
  .min(1)
  .transform((n) => Math.min(n, MAX_GENERATE_TOKENS))
  .nullish();

const samplingFields = {
  model: z.string().optional(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: maxTokensSchema,
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nonnegative().nullish(),
  repeat_penalty: z.number().min(0).max(10).nullish(),
  stop: stopSchema,
  n: z.literal(1).nullish(),
  ignore_eos: z.boolean().nullish(),
  /** llama-server's `return_tokens`: the completion's token ids in the response (`manifold.tokens`; in a stream, each chunk's too). */
  return_tokens: z.boolean().nullish(),
};

const contentPartSchema = z.object({ type: z.literal('text'), text: z.string() });

export const chatMessageSchema = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([z.string(), z.array(contentPartSchema)], { error: expectedOneOf('a string, an array of text parts ({"type": "text", "text": …}) or null') }).nullable(),
});

export const chatCompletionRequestSchema = z.object({
  ...samplingFields,
  messages: z.array(chatMessageSchema).min(1),
  max_completion_tokens: maxTokensSchema,
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

export const completionRequestSchema = z.object({
  ...samplingFields,
  prompt: z.union([z.string(), z.array(z.string()).length(1), z.array(z.number().int().nonnegative()).min(1)], {
    error: expectedOneOf('a string, an array of one string, or an array of token ids (whole numbers ≥ 0)'),
  }),
});
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

export type SamplingRequest = ChatCompletionRequest | CompletionRequest;
