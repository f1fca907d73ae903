/**
 * The engine protocol: every message between core and an engine child, as zod schemas of unions tagged by
 * `type`. Requests carry an `id`; every reply and stream event carries the `id` of the request it answers,
 * so replies are matched by id and never by order. Each side parses what it receives once: the engine with
 * engineRequestSchema, core with parseEngineMessage (a hand check for the per-token `tokens` message, the
 * schema for the rest). Core sends requests as it built them (typed inputs); the engine applies the defaults.
 * The engine sends the messages of one event-loop turn as one IPC message (an array when there are
 * several); a `tokens` message carries the tokens of its request that were ready together, one or more.
 */
import { z } from 'zod';
import { areTokenIds, isTokenId, tokenIdsSchema } from './token-ids.js';
import {
  gpuLayersSchema,
  kvTypeSchema,
  MAX_CONTEXT_CELLS,
  poolSizesSchema,
  POOLS,
  precheckVerdictSchema,
  prefixReportSchema,
  rebuildChangeSchema,
  rebuildTimingsSchema,
} from './rebuild.js';
import { prefixBorrowSchema, prefixCacheOptionsSchema, prefixCacheReportSchema, prefixCacheShareSchema } from './prefix-cache.js';

const tokenId = z.number().int().nonnegative();
const requestId = z.number().int().nonnegative();

export const flashAttentionSchema = z.union([z.literal('auto'), z.boolean()]);

export const loadOptionsSchema = z
  .object({
    modelPath: z.string().min(1),
    gpuLayers: gpuLayersSchema.default('auto'),
    /** Tokens each slot can hold. */
    contextSize: z
      .number()
      .int()
      .min(64)
      .max(1 << 22)
      .default(4096),
    slots: z.number().int().min(1).max(256).default(1),
    /** Threads for evaluation; 0 lets node-llama-cpp choose. */
    threads: z.number().int().nonnegative().max(1024).default(0),
    /** `auto` lets llama.cpp decide (node-llama-cpp's default), except that a llama-server child on the CPU runs without it (llama-server-args.ts). */
    flashAttention: flashAttentionSchema.default('auto'),
    kvType: kvTypeSchema.default('f16'),
    batchSize: z
      .number()
      .int()
      .min(1)
      .max(1 << 16)
      .optional(),
    /** The tiered prefix cache of evicted conversations (common/prefix-cache.ts). */
    prefixCache: prefixCacheOptionsSchema.default(prefixCacheOptionsSchema.parse({})),
    /** Test-only fault injection for live resize; never set outside tests (no config or API reaches it). */
    testOnlyFaults: z
      .object({
        /** Fail the rebuild's allocation before or after the teardown mark. */
        failAllocation: z.enum(['before_teardown', 'after_teardown']).optional(),
        /** Fail the rollback's restore of the old sizes. */
        failRestore: z.boolean().optional(),
        /** Hold each save of an evicted conversation this long first (a slow disk): the time between a request's dispatch and its start. */
        delayPrefixSaveMs: z.number().int().min(0).max(60_000).optional(),
      })
      .optional(),
  })
  .refine((o) => o.contextSize * o.slots <= MAX_CONTEXT_CELLS, { message: `contextSize × slots may be at most ${MAX_CONTEXT_CELLS} tokens` });
export type LoadOptions = z.infer<typeof loadOptionsSchema>;
export type LoadOptionsInput = z.input<typeof loadOptionsSchema>;

/** The most tokens the penalties may look back over, and the most `logitBias` entries. */
export const MAX_REPEAT_LAST_N = 1 << 16;
export const MAX_LOGIT_BIAS_ENTRIES = 1024;

export const samplingSchema = z.object({
  temperature: z.number().min(0).max(100).default(0.8),
  topK: z.number().int().nonnegative().default(40),
  topP: z.number().min(0).max(1).default(0.95),
  minP: z.number().min(0).max(1).default(0.05),
  seed: z.number().int().nonnegative().optional(),
  /** 1 disables it. */
  repeatPenalty: z.number().min(0).max(10).default(1),
  /** How many of the last tokens (prompt and generated) the repeat, presence and frequency penalties look at. */
  repeatLastN: z.number().int().nonnegative().max(MAX_REPEAT_LAST_N).default(64),
  /** Subtracted once from the logit of each token among the last `repeatLastN` (OpenAI's presence_penalty); 0 disables it. */
  presencePenalty: z.number().min(-2).max(2).default(0),
  /** Subtracted from a token's logit once per time it is among the last `repeatLastN` (OpenAI's frequency_penalty). */
  frequencyPenalty: z.number().min(-2).max(2).default(0),
  /** `[token, bias]`: added to the token's logit (OpenAI's logit_bias); -100 bans the token. */
  logitBias: z
    .array(z.tuple([tokenId, z.number().min(-100).max(100)]))
    .max(MAX_LOGIT_BIAS_ENTRIES)
    .default([]),
});
export type Sampling = z.infer<typeof samplingSchema>;

/** The most stop strings a request may have, and the longest one. */
export const MAX_STOP_STRINGS = 16;
export const MAX_STOP_LENGTH = 256;
/** The most tokens a request may ask for; the engine caps it further by what the slot can hold. */
export const MAX_GENERATE_TOKENS = 1 << 20;
/** The most alternatives a token's logprobs may list (OpenAI's top_logprobs bound). */
export const MAX_TOP_LOGPROBS = 20;

/** The log of a probability too small for a float: OpenAI's floor. */
const LOGPROB_FLOOR = -9999;

/** A logprob clamped to [LOGPROB_FLOOR, 0]. */
export const clampLogprob = (logprob: number): number => Math.min(0, Math.max(LOGPROB_FLOOR, logprob));

/** A probability's logprob, clamped (0 or less gives the floor). */
export const logprobOfProbability = (probability: number): number => (probability > 0 ? clampLogprob(Math.log(probability)) : LOGPROB_FLOOR);
/** The longest grammar (GBNF text) a request may carry. */
export const MAX_GRAMMAR_LENGTH = 256 * 1024;

export const generateRequestSchema = z.object({
  tokens: tokenIdsSchema({ min: 1 }),
  conversationId: z.string().max(256).optional(),
  sampling: samplingSchema.default(samplingSchema.parse({})),
  stop: z.array(z.string().min(1).max(MAX_STOP_LENGTH)).max(MAX_STOP_STRINGS).default([]),
  maxTokens: z.number().int().min(1).max(MAX_GENERATE_TOKENS).default(256),
  /** Keep generating past end-of-generation tokens (llama-server's ignore_eos). */
  ignoreEos: z.boolean().default(false),
  /** A GBNF grammar (llama.cpp's) the output must follow; a grammar that does not parse is a `bad_grammar` error. */
  grammar: z.string().min(1).max(MAX_GRAMMAR_LENGTH).optional(),
  /** Report each generated token's log-probability and this many of the likeliest alternatives (OpenAI's top_logprobs); absent: none. */
  logprobs: z.number().int().min(0).max(MAX_TOP_LOGPROBS).optional(),
  /**
   * A thinking budget: at most `tokens` tokens between the template's thinking tags (`open`: the prompt
   * opened them), then the end tag is written and the answer goes on (llama-server's reasoning budget).
   */
  thinkingBudget: z
    .object({
      tokens: z.number().int().min(0).max(MAX_GENERATE_TOKENS),
      start: z.string().max(MAX_STOP_LENGTH),
      end: z.string().min(1).max(MAX_STOP_LENGTH),
      open: z.boolean(),
    })
    .optional(),
  /** Control tokens written out in the text (llama-server's `preserved_tokens`): a thinking model's tags, so core can read them. */
  preservedTokens: z.array(z.string().min(1).max(MAX_STOP_LENGTH)).max(MAX_STOP_STRINGS).default([]),
  /** Another local replica's saved prefix-cache entry this engine may restore (common/prefix-cache.ts); absent: only its own. */
  borrow: prefixBorrowSchema.optional(),
});
export type GenerateRequest = z.infer<typeof generateRequestSchema>;
export type GenerateRequestInput = z.input<typeof generateRequestSchema>;

/** The most inputs one `embed` request carries (OpenAI's limit for /v1/embeddings). */
export const MAX_EMBED_INPUTS = 2048;

/** The inputs of an `embed` request: each a non-empty list of token ids, embedded on its own. */
export const embedInputsSchema = z
  .array(tokenIdsSchema({ min: 1 }))
  .min(1)
  .max(MAX_EMBED_INPUTS);

export const engineRequestSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('load'), id: requestId, options: loadOptionsSchema }),
  z.object({ type: z.literal('generate'), id: requestId, request: generateRequestSchema }),
  /** One embedding vector per input, from the engine's embedding context (created at the first request). */
  z.object({ type: z.literal('embed'), id: requestId, inputs: embedInputsSchema }),
  z.object({ type: z.literal('cancel'), id: requestId, target: requestId }),
  z.object({ type: z.literal('slots'), id: requestId }),
  z.object({ type: z.literal('activity'), id: requestId }),
  z.object({ type: z.literal('ping'), id: requestId }),
  z.object({ type: z.literal('shutdown'), id: requestId }),
  /** Live resize (DESIGN §5): the pre-check, never touching anything. */
  z.object({ type: z.literal('precheck'), id: requestId, change: rebuildChangeSchema }),
  /** Frees the touched pools and allocates them at the new sizes; says `teardown` before freeing anything. */
  z.object({ type: z.literal('rebuild'), id: requestId, change: rebuildChangeSchema, skipPrecheck: z.boolean().default(false) }),
  /** After a rebuild failed past its teardown: allocates these pools at these (old) sizes again. */
  z.object({ type: z.literal('restore'), id: requestId, pools: z.array(z.enum(POOLS)).min(1), sizes: poolSizesSchema.partial() }),
]);
export type EngineRequest = z.infer<typeof engineRequestSchema>;
/** A request as core sends it: defaults left for the engine's parse to apply. */
export type EngineRequestInput = z.input<typeof engineRequestSchema>;
export type EngineRequestType = EngineRequest['type'];
export const ENGINE_REQUEST_TYPES = engineRequestSchema.options.map((o) => o.shape.type.value);

export const slotStateSchema = z.enum(['idle', 'prefill', 'decode']);
export type SlotState = z.infer<typeof slotStateSchema>;

export const slotViewSchema = z.object({
  slot: z.number().int().nonnegative(),
  state: slotStateSchema,
  heldTokens: z.number().int().nonnegative(),
  conversationId: z.string().nullable(),
  /** Epoch ms of the last request served; null when never used. */
  lastUsed: z.number().nullable(),
});
export type SlotView = z.infer<typeof slotViewSchema>;

/** A rebuild's background re-evaluation of kept prefixes (slot-count or KV-type change): how many, how many done. */
export const reEvaluationSchema = z.object({ done: z.number().int().nonnegative(), total: z.number().int().positive() });
export type ReEvaluation = z.infer<typeof reEvaluationSchema>;

/** What keeps an engine from being idle (DESIGN §5): finished requests never do. */
export const activitySchema = z.object({
  pending_prefill: z.number().int().nonnegative(),
  running_decode: z.number().int().nonnegative(),
  undrained_replies: z.number().int().nonnegative(),
  finished: z.number().int().nonnegative(),
  /** The last rebuild's re-evaluation of kept prefixes while it runs (its slots count as pending prefill); null otherwise. */
  re_evaluation: reEvaluationSchema.nullable().default(null),
});
export type Activity = z.infer<typeof activitySchema>;

const memoryStateSchema = z.object({ total: z.number(), used: z.number(), free: z.number() });

export const readyInfoSchema = z.object({
  model: z.object({
    name: z.string().nullable(),
    architecture: z.string().nullable(),
    trainContextSize: z.number().int(),
    vocabSize: z.number().int(),
    parameters: z.number(),
    fileBytes: z.number(),
  }),
  sizes: z.object({
    contextSize: z.number().int(),
    slots: z.number().int(),
    gpuLayers: z.number().int(),
    batchSize: z.number().int(),
    flashAttention: flashAttentionSchema,
    kvType: kvTypeSchema,
    contextStateBytes: z.number(),
  }),
  backend: z.string(),
  vram: memoryStateSchema,
  ram: memoryStateSchema,
  loadMs: z.number(),
  /** Models this engine process has loaded (a kv rebuild leaves it unchanged; a weights rebuild adds one). */
  modelLoads: z.number().int(),
  /** What another engine needs to borrow its saved entries (tier folders, state layout); absent while the cache is off. */
  prefixCacheShare: prefixCacheShareSchema.optional(),
});
export type ReadyInfo = z.infer<typeof readyInfoSchema>;

/** A rebuild's or restore's result: the engine's state afterwards and how the slots' prefixes came back. */
export const rebuiltSchema = z.object({ info: readyInfoSchema, prefixes: prefixReportSchema, timings: rebuildTimingsSchema });
export type Rebuilt = z.infer<typeof rebuiltSchema>;

/** One candidate token with its log-probability under the sampler (after top-k, top-p, min-p and temperature). */
const tokenLogprobSchema = z.object({ token: tokenId, text: z.string(), logprob: z.number().max(0) });
export type TokenLogprob = z.infer<typeof tokenLogprobSchema>;
/** A generated token's logprob and the likeliest alternatives, most likely first (at most as many as the sampler kept). */
export const generatedLogprobSchema = tokenLogprobSchema.extend({ top: z.array(tokenLogprobSchema).max(MAX_TOP_LOGPROBS) });
export type GeneratedLogprob = z.infer<typeof generatedLogprobSchema>;

export const finishReasonSchema = z.enum(['stop', 'length', 'cancelled']);
export type FinishReason = z.infer<typeof finishReasonSchema>;

export const generateDoneSchema = z.object({
  finishReason: finishReasonSchema,
  /** The stop string that ended generation, when one did. */
  stoppedBy: z.string().nullable(),
  text: z.string(),
  completionTokens: tokenIdsSchema(),
  usage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int() }),
  /** The slot that served it; null when it was cancelled while waiting for a slot. */
  slot: z.number().int().nonnegative().nullable(),
  /** Prompt tokens kept from the slot's KV cache (the cache hit). */
  reusedTokens: z.number().int().nonnegative(),
  /** Tokens the slot holds after the request (what the router may index for it). */
  heldTokens: z.number().int().nonnegative(),
  timings: z.object({
    queuedMs: z.number(),
    /** From the grant of a slot to the first token: keeping the cached prefix and evaluating the rest. */
    prefillMs: z.number(),
    decodeMs: z.number(),
    prefillTokens: z.number().int(),
    decodeTokensPerSecond: z.number(),
  }),
});
export type GenerateDone = z.infer<typeof generateDoneSchema>;

export const ENGINE_ERROR_CODES = [
  'bad_message',
  'unknown_type',
  'model_not_found',
  'model_invalid',
  'load_failed',
  'already_loaded',
  'not_loaded',
  'prompt_too_long',
  /** The request's grammar does not parse (llama.cpp's GBNF parser refused it). */
  'bad_grammar',
  'generate_failed',
  'unknown_request',
  /** A rebuild was asked of an engine that is running requests (the barrier should have prevented it). */
  'busy',
  /** The pre-check refused a rebuild; nothing was touched. */
  'does_not_fit',
  /** A rebuild or restore failed; whether before or after the teardown mark, the `teardown` message says. */
  'rebuild_failed',
] as const;
export const engineErrorCodeSchema = z.enum(ENGINE_ERROR_CODES);
export type EngineErrorCode = z.infer<typeof engineErrorCodeSchema>;

export const engineMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('progress'), id: requestId, stage: z.enum(['model', 'context']), progress: z.number().min(0).max(1) }),
  z.object({ type: z.literal('ready'), id: requestId, info: readyInfoSchema }),
  z.object({
    type: z.literal('started'),
    id: requestId,
    slot: z.number().int(),
    reusedTokens: z.number().int(),
    queuedMs: z.number(),
    /** What the prefix cache did while this request took its slot; absent when it did nothing. */
    prefixCache: prefixCacheReportSchema.optional(),
  }),
  /** `logprobs`: one per token, only for a request that asked for them. */
  z.object({ type: z.literal('tokens'), id: requestId, tokens: tokenIdsSchema(), text: z.string(), logprobs: z.array(generatedLogprobSchema).optional() }),
  z.object({ type: z.literal('done'), id: requestId, result: generateDoneSchema }),
  z.object({ type: z.literal('embeddings'), id: requestId, vectors: z.array(z.array(z.number())) }),
  z.object({ type: z.literal('cancelled'), id: requestId, found: z.boolean() }),
  z.object({ type: z.literal('slots'), id: requestId, slots: z.array(slotViewSchema) }),
  z.object({ type: z.literal('activity'), id: requestId, activity: activitySchema }),
  z.object({ type: z.literal('pong'), id: requestId, uptimeMs: z.number() }),
  z.object({ type: z.literal('stopping'), id: requestId }),
  z.object({ type: z.literal('verdict'), id: requestId, verdict: precheckVerdictSchema }),
  /** The rebuild's mark: sent before the engine frees anything; an error after it means pools were freed. */
  z.object({ type: z.literal('teardown'), id: requestId }),
  z.object({ type: z.literal('rebuilt'), id: requestId, result: rebuiltSchema }),
  z.object({ type: z.literal('error'), id: requestId.nullable(), code: engineErrorCodeSchema, message: z.string() }),
]);
export type EngineMessage = z.infer<typeof engineMessageSchema>;
export type EngineMessageOf<T extends EngineMessage['type']> = Extract<EngineMessage, { type: T }>;

/** A `tokens` message checked by hand for exactly its schema's shape; undefined when it is not one. */
function asTokensMessage(raw: unknown): EngineMessageOf<'tokens'> | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { type, id, tokens, text, logprobs } = raw as Record<string, unknown>;
  // With logprobs (asked for, so off the common path) the schema checks the message.
  // A request id is checked as a token id is: a whole number ≥ 0 (zod's `int()` means a safe integer).
  if (type !== 'tokens' || logprobs !== undefined || !isTokenId(id) || typeof text !== 'string' || !Array.isArray(tokens) || !areTokenIds(tokens))
    return undefined;
  return { type, id, tokens, text };
}

/**
 * Parses one message from an engine, once. A `tokens` message (one per generated token, the hot path) is
 * validated by a hand check of its shape (without logprobs); every other message, and a `tokens` message that check refuses
 * (so a malformed one is reported in the schema's words), goes through engineMessageSchema.
 */
export function parseEngineMessage(raw: unknown): z.ZodSafeParseResult<EngineMessage> {
  const tokens = asTokensMessage(raw);
  return tokens ? { success: true, data: tokens } : engineMessageSchema.safeParse(raw);
}
