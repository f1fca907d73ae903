/**
 * The OpenAI-compatible request bodies, as zod schemas. Nothing is silently ignored: the schemas are
 * strict, so a parameter Manifold does not honour is a 400 naming it, except the few in
 * IGNORED_FIELDS, which change nothing a local server does (documented in the README's API table).
 * `top_k`, `min_p`, `repeat_penalty`, `repeat_last_n`, `ignore_eos`, `grammar` and `return_tokens` are
 * llama-server's extensions.
 *
 * Every limit of the engine protocol (`generateRequestSchema`) is checked here first, with a message in
 * words, so no body can fail at the engine boundary: `max_tokens` / `max_completion_tokens` above what
 * the protocol takes are clamped to it (as llama-server clamps to what the context holds; the engine then
 * caps by what the slot can still hold), stop strings over the protocol's count or length are refused.
 * Parse with `parseRequest` (http-error.ts) so every other refusal is in words too.
 */
import { z } from 'zod';
import { tokenIdsSchema } from '../../common/token-ids.js';
import {
  MAX_EMBED_INPUTS,
  MAX_GENERATE_TOKENS,
  MAX_GRAMMAR_LENGTH,
  MAX_LOGIT_BIAS_ENTRIES,
  MAX_REPEAT_LAST_N,
  MAX_STOP_LENGTH,
  MAX_STOP_STRINGS,
} from '../../common/engine-protocol.js';
import { expectedOneOf } from '../../common/issue-words.js';
import { chatLogprobsFields, completionLogprobsFields } from './logprobs.js';
import { responseFormatSchema } from './response-format.js';
import { checkToolMessage, checkToolRequest, toolMessageFields, toolRequestFields } from './tool-calls-schemas.js';

const lengthOf = (input: unknown): number => (typeof input === 'string' || Array.isArray(input) ? input.length : 0);

const stopStringSchema = z
  .string()
  .min(1, 'a stop string must not be empty')
  .max(MAX_STOP_LENGTH, { error: (issue) => `a stop string is at most ${MAX_STOP_LENGTH} characters (got ${lengthOf(issue.input)})` });

const stopSchema = z
  .union(
    [
      stopStringSchema,
      z.array(stopStringSchema).max(MAX_STOP_STRINGS, { error: (issue) => `at most ${MAX_STOP_STRINGS} stop strings (got ${lengthOf(issue.input)})` }),
    ],
    {
      error: expectedOneOf(`a string or an array of at most ${MAX_STOP_STRINGS} strings`),
    },
  )
  .nullish();

/** A token budget: a whole number ≥ 1, clamped to the most the engine protocol takes. */
const maxTokensSchema = z
  .number()
  .int()
  .min(1)
  .transform((n) => Math.min(n, MAX_GENERATE_TOKENS))
  .nullish();

/**
 * Accepted and ignored: `metadata` (OpenAI's tags for stored completions), `service_tier` (OpenAI's
 * billing tier) and `safety_identifier` (OpenAI's abuse tracking). Each is checked for its OpenAI type,
 * so a wrong value is still a 400. (`store` is honoured on chat completions: stored-completion.ts.)
 */
export const IGNORED_FIELDS = {
  metadata: z.record(z.string(), z.string()).nullish(),
  service_tier: z.string().nullish(),
  safety_identifier: z.string().nullish(),
};

/** A field that may be sent only as null (or not at all), with `why` as the refusal. */
const onlyNull = (why: string) => z.null({ error: why }).optional();

/** OpenAI's penalties (and llama.cpp's range for them). */
const penaltySchema = z.number().min(-2).max(2).nullish();

/**
 * OpenAI's `logit_bias`: token id (as a JSON key) → bias added to that token's logit, -100..100; -100
 * bans the token. Parsed into `[id, bias]` pairs.
 */
const logitBiasSchema = z
  .record(z.string().regex(/^\d{1,9}$/, 'a token id (a whole number ≥ 0)'), z.number().min(-100).max(100))
  .refine((bias) => Object.keys(bias).length <= MAX_LOGIT_BIAS_ENTRIES, { error: `at most ${MAX_LOGIT_BIAS_ENTRIES} tokens` })
  .transform((bias) => Object.entries(bias).map(([token, value]) => [Number(token), value] as [number, number]))
  .nullish();

/** OpenAI's `user`, and its newer `prompt_cache_key`: the router's conversation tie-break. */
const conversationKeySchema = z.string().max(256).nullish();

const samplingFields = {
  ...IGNORED_FIELDS,
  model: z.string().optional(),
  stream: z.boolean().nullish(),
  /** `include_obfuscation` is accepted and ignored: no obfuscation padding is sent (the stream is on loopback or the operator's network). */
  stream_options: z.object({ include_usage: z.boolean().nullish(), include_obfuscation: z.boolean().nullish() }).strict().nullish(),
  max_tokens: maxTokensSchema,
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nonnegative().nullish(),
  repeat_penalty: z.number().min(0).max(10).nullish(),
  /** How many of the last tokens the penalties look at (llama-server's; 64 by default). */
  repeat_last_n: z.number().int().min(0).max(MAX_REPEAT_LAST_N).nullish(),
  presence_penalty: penaltySchema,
  frequency_penalty: penaltySchema,
  logit_bias: logitBiasSchema,
  user: conversationKeySchema,
  prompt_cache_key: conversationKeySchema,
  stop: stopSchema,
  n: z.literal(1, { error: 'one choice per request; send several requests for several answers (each is routed on its own)' }).nullish(),
  ignore_eos: z.boolean().nullish(),
  /** llama-server's `return_tokens`: the completion's token ids in the response (`manifold.tokens`; in a stream, each chunk's too). */
  return_tokens: z.boolean().nullish(),
  /** llama-server's `grammar`: a GBNF grammar the output must follow. */
  grammar: z
    .string()
    .min(1, 'a grammar must not be empty')
    .max(MAX_GRAMMAR_LENGTH, { error: (issue) => `a grammar is at most ${MAX_GRAMMAR_LENGTH} characters (got ${lengthOf(issue.input)})` })
    .nullish(),
  /** Structured output (response-format.ts), held by a grammar in the engine. */
  response_format: responseFormatSchema.nullish(),
};

const contentPartSchema = z.object({ type: z.literal('text'), text: z.string() }).strict();

/** A turn of the history; tool calling adds an assistant turn's `tool_calls` (its content may then be null) and `tool` turns. */
export const chatMessageSchema = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z
      .union([z.string(), z.array(contentPartSchema)], { error: expectedOneOf('a string, an array of text parts ({"type": "text", "text": …}) or null') })
      .nullable(),
    /** OpenAI's participant name, passed to the template as `name` (a few templates render it). */
    name: z.string().nullish(),
    /** An assistant turn's thinking as this server returned it, handed back for templates that keep it in history. */
    reasoning_content: z.string().nullish(),
    ...toolMessageFields,
  })
  .strict()
  .superRefine(checkToolMessage);

/**
 * Thinking, in llama-server's names: `reasoning_format` (`none` leaves the thinking in `content`; the others
 * put it in `reasoning_content`, `deepseek-legacy` also in `content`), `chat_template_kwargs` (template
 * variables, e.g. `enable_thinking: false`), OpenAI's `reasoning_effort` (`none` turns thinking off;
 * others reach templates that read it, gpt-oss's) and a thinking budget in tokens
 * (`thinking_budget_tokens` or llama-server's `reasoning_budget_tokens`; -1 is no limit).
 */
const thinkingFields = {
  reasoning_format: z
    .enum(['none', 'auto', 'deepseek', 'deepseek-legacy'], { error: expectedOneOf('"none", "auto", "deepseek" or "deepseek-legacy"') })
    .nullish(),
  chat_template_kwargs: z
    .record(z.string(), z.unknown())
    .refine((kwargs) => kwargs.enable_thinking === undefined || typeof kwargs.enable_thinking === 'boolean', { error: 'enable_thinking must be true or false' })
    .nullish(),
  reasoning_effort: z.string().max(64).nullish(),
  thinking_budget_tokens: z.number().int().min(-1).nullish(),
  reasoning_budget_tokens: z.number().int().min(-1).nullish(),
};

export const chatCompletionRequestSchema = z
  .object({
    ...samplingFields,
    ...chatLogprobsFields,
    ...toolRequestFields,
    ...thinkingFields,
    messages: z.array(chatMessageSchema).min(1),
    max_completion_tokens: maxTokensSchema,
    /** OpenAI's `store`: true keeps the exchange as a chat-window conversation once the answer is complete (stored-completion.ts). */
    store: z.boolean().nullish(),
  })
  .strict()
  .superRefine(checkToolRequest);
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

export const completionRequestSchema = z
  .object({
    ...samplingFields,
    ...completionLogprobsFields,
    prompt: z.union([z.string(), z.array(z.string()).length(1), tokenIdsSchema({ min: 1 })], {
      error: expectedOneOf('a string, an array of one string, or an array of token ids (whole numbers ≥ 0)'),
    }),
    echo: z.literal(false, { error: 'the prompt is not echoed by this server; leave echo out or false' }).nullish(),
    suffix: onlyNull('insertion (a suffix after the completion) is not supported by this server'),
    best_of: z.literal(1, { error: 'one candidate per request on this server' }).nullish(),
  })
  .strict();
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

export type SamplingRequest = ChatCompletionRequest | CompletionRequest;

const promptIdsSchema = tokenIdsSchema({ min: 1 });

/**
 * `/v1/embeddings`: a string, strings, token ids or lists of token ids; the vectors as floats or base64
 * (little-endian float32, as OpenAI sends them). `dimensions` is refused: the model's vectors have one
 * size. `user` is accepted and ignored here (an embedding has no conversation to route by).
 */
export const embeddingRequestSchema = z
  .object({
    model: z.string().optional(),
    input: z.union(
      [z.string().min(1), z.array(z.string().min(1)).min(1).max(MAX_EMBED_INPUTS), promptIdsSchema, z.array(promptIdsSchema).min(1).max(MAX_EMBED_INPUTS)],
      {
        error: expectedOneOf(
          `a non-empty string, an array of at most ${MAX_EMBED_INPUTS} non-empty strings, an array of token ids, or an array of such arrays`,
        ),
      },
    ),
    encoding_format: z.enum(['float', 'base64']).nullish(),
    dimensions: onlyNull("is not supported: the model's embeddings have one fixed size"),
    user: z.string().nullish(),
  })
  .strict();
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;
