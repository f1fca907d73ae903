/**
 * llama.cpp's llama-server as a peer: its native streamed `POST /completion` (token ids in, one chunk per
 * token with its id, a last chunk with `stop: true`, the slot that served it, `stop_type`, the stop string and
 * `timings` whose `cache_n` is the prompt tokens kept in the slot), `cache_prompt` so a slot keeps a
 * conversation's prefix, `GET /slots` (enabled by default) for what each slot holds, and with
 * `--slot-save-path` the slot actions that save and restore one slot's KV state to a file (a local
 * llama-server's live resize).
 */
import { z } from 'zod';
import { areTokenIds, tokenIdsSchema } from '../../common/token-ids.js';
import {
  clampLogprob,
  logprobOfProbability,
  type GeneratedLogprob,
  type GenerateRequest,
  type SlotView,
  type TokenLogprob,
} from '../../common/engine-protocol.js';
import { parsePeerJson, type CompletionDialect, type Parsed, type PeerFinish, type SlotStateDialect, type StreamPiece } from './completion-dialect.js';

const tokenId = z.number().int().nonnegative();

const timingsSchema = z.object({
  cache_n: z.number().int().nonnegative(),
  prompt_n: z.number().int().nonnegative(),
  prompt_ms: z.number().nonnegative(),
  predicted_n: z.number().int().nonnegative(),
  predicted_ms: z.number().nonnegative(),
  // nlohmann's JSON writes a division by zero as null.
  predicted_per_second: z.number().nullish(),
});

/** One candidate of `completion_probabilities`: `prob` with post_sampling_probs (what is asked), `logprob` otherwise. */
const candidateSchema = z.object({ id: tokenId, token: z.string(), logprob: z.number().optional(), prob: z.number().min(0).max(1).optional() });
const probabilitiesSchema = candidateSchema.extend({ top_probs: z.array(candidateSchema).optional(), top_logprobs: z.array(candidateSchema).optional() });

const chunkSchema = z.object({
  content: z.string().default(''),
  completion_probabilities: z.array(probabilitiesSchema).optional(),
  tokens: tokenIdsSchema().default([]),
  stop: z.boolean(),
  /** -1 on the per-token chunks; the slot on the last one. */
  id_slot: z.number().int().min(-1).optional(),
  stop_type: z.string().optional(),
  stopping_word: z.string().optional(),
  tokens_predicted: z.number().int().nonnegative().optional(),
  timings: timingsSchema.optional(),
});

const nextTokenSchema = z.object({ n_decoded: z.number().int().nonnegative().optional() });
const slotsSchema = z.array(
  z.object({
    id: z.number().int().nonnegative(),
    is_processing: z.boolean(),
    /** Tokens in the slot's cache (the last prompt and what was generated after it). */
    n_prompt_tokens: z.number().int().nonnegative().optional(),
    next_token: z.union([nextTokenSchema, z.array(nextTokenSchema)]).optional(),
  }),
);

/** The answer to `POST /slots/{id}?action=save|restore` (`n_saved` or `n_restored`). */
const slotActionSchema = z.object({
  n_saved: z.number().int().nonnegative().optional(),
  n_restored: z.number().int().nonnegative().optional(),
  n_written: z.number().int().nonnegative().optional(),
  n_read: z.number().int().nonnegative().optional(),
  timings: z.object({ save_ms: z.number().optional(), restore_ms: z.number().optional() }).optional(),
});

/** Slot files (`--slot-save-path`): saved and restored by slot; a fill is a one-token completion pinned to its slot. */
const llamaServerSlotState: SlotStateDialect = {
  actionPath: (slot, action) => `/slots/${slot}?action=${action}`,
  actionBody: (filename) => ({ filename }),
  actionResult(raw) {
    const parsed = parsePeerJson(slotActionSchema, raw, 'the slot action');
    if (!parsed.ok) return parsed;
    const { n_saved, n_restored, n_written, n_read, timings } = parsed.value;
    const tokens = n_saved ?? n_restored;
    if (tokens === undefined) return { ok: false, problem: 'the slot action: it names neither n_saved nor n_restored' };
    return { ok: true, value: { tokens, bytes: n_written ?? n_read ?? 0, ms: timings?.save_ms ?? timings?.restore_ms ?? 0 } };
  },
  fillBody: (slot, tokens) => ({ prompt: tokens, id_slot: slot, n_predict: 1, cache_prompt: true, stream: false, temperature: 0 }),
};

function logprobOf(candidate: z.infer<typeof candidateSchema>): TokenLogprob {
  const logprob = candidate.logprob === undefined ? logprobOfProbability(candidate.prob ?? 0) : clampLogprob(candidate.logprob);
  return { token: candidate.id, text: candidate.token, logprob };
}

const generatedLogprobOf = (p: z.infer<typeof probabilitiesSchema>): GeneratedLogprob => ({
  ...logprobOf(p),
  top: (p.top_probs ?? p.top_logprobs ?? []).map(logprobOf),
});

function finishOf(chunk: z.infer<typeof chunkSchema>): PeerFinish {
  const timings = chunk.timings;
  return {
    // `limit` is n_predict reached; `none` on a last chunk is a slot that ran out of context.
    reason: chunk.stop_type === 'eos' || chunk.stop_type === 'word' ? 'stop' : 'length',
    stoppedBy: chunk.stop_type === 'word' && chunk.stopping_word ? chunk.stopping_word : null,
    completionIds: null,
    slot: chunk.id_slot !== undefined && chunk.id_slot >= 0 ? chunk.id_slot : null,
    reusedTokens: timings?.cache_n ?? null,
    completionTokens: chunk.tokens_predicted ?? timings?.predicted_n ?? null,
    timings: timings
      ? {
          prefillMs: timings.prompt_ms,
          prefillTokens: timings.prompt_n,
          decodeMs: timings.predicted_ms,
          decodeTokensPerSecond: timings.predicted_per_second ?? (timings.predicted_ms > 0 ? (timings.predicted_n * 1000) / timings.predicted_ms : 0),
        }
      : null,
  };
}

/**
 * The ordinary per-token chunk (`{content, tokens, stop: false, …}` with no probabilities), read by hand:
 * it is the relay's hot path (one a token, and on a machine where the engine's threads use every core
 * each microsecond here is taken from the decode), and zod's walk of chunkSchema costs tens of µs a
 * chunk. The hand check is as strict as chunkSchema on the fields it reads (a string, an array of
 * token ids, `stop` false) and leaves anything else — the last chunk, probabilities, an error, a
 * malformed chunk — to chunkSchema, which names what is wrong. Undefined when it is not such a chunk.
 */
function plainTokenPiece(raw: unknown): Parsed<StreamPiece> | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const chunk = raw as Record<string, unknown>;
  const { content, tokens } = chunk;
  if (chunk.stop !== false || typeof content !== 'string' || !Array.isArray(tokens) || !areTokenIds(tokens)) return undefined;
  if (chunk.completion_probabilities !== undefined || chunk.error !== undefined) return undefined;
  return { ok: true, value: content === '' && tokens.length === 0 ? {} : { tokens: { ids: tokens, text: content } } };
}

/**
 * llama-server's reasoning budget (its sampler writes the end tag once the budget is spent); a thinking the
 * prompt opened is told by `generation_prompt` (the start tag), which llama-server also feeds a grammar, so
 * not with one (as the node-llama-cpp engine, which keeps no budget under a grammar).
 */
function thinkingBudgetFields(budget: NonNullable<GenerateRequest['thinkingBudget']>, withGrammar: boolean): Record<string, unknown> {
  if (withGrammar) return {};
  return {
    reasoning_budget_tokens: budget.tokens,
    reasoning_budget_start_tag: budget.start,
    reasoning_budget_end_tags: [budget.end],
    // Its handler is what sets the tokens written when the budget is spent (the end tag after this message).
    reasoning_budget_message: '',
    ...(budget.open && budget.start ? { generation_prompt: budget.start } : {}),
  };
}

export const llamaServerDialect: CompletionDialect = {
  path: '/completion',
  takesGrammar: true,
  takesLogprobs: true,
  body: (request: GenerateRequest, peer) => ({
    prompt: request.tokens,
    ...(peer.slot !== undefined ? { id_slot: peer.slot } : {}),
    n_predict: request.maxTokens,
    stream: true,
    cache_prompt: true,
    return_tokens: true,
    temperature: request.sampling.temperature,
    top_k: request.sampling.topK,
    top_p: request.sampling.topP,
    min_p: request.sampling.minP,
    ...(request.sampling.seed !== undefined ? { seed: request.sampling.seed } : {}),
    repeat_penalty: request.sampling.repeatPenalty,
    repeat_last_n: request.sampling.repeatLastN,
    presence_penalty: request.sampling.presencePenalty,
    frequency_penalty: request.sampling.frequencyPenalty,
    // `[id, false]` is llama-server's ban (OpenAI's -100).
    logit_bias: request.sampling.logitBias.map(([token, bias]) => [token, bias <= -100 ? false : bias]),
    stop: request.stop,
    ignore_eos: request.ignoreEos,
    ...(request.grammar !== undefined ? { grammar: request.grammar } : {}),
    ...(request.preservedTokens.length > 0 ? { preserved_tokens: request.preservedTokens } : {}),
    ...(request.thinkingBudget ? thinkingBudgetFields(request.thinkingBudget, request.grammar !== undefined) : {}),
    // Probabilities after the sampler chain, as node-llama-cpp gives them.
    ...(request.logprobs !== undefined ? { n_probs: Math.max(1, request.logprobs), post_sampling_probs: true } : {}),
  }),
  read(raw: unknown): Parsed<StreamPiece> {
    const plain = plainTokenPiece(raw);
    if (plain) return plain;
    if (typeof raw === 'object' && raw !== null && 'error' in raw) return { ok: true, value: { error: raw } };
    const parsed = parsePeerJson(chunkSchema, raw, 'the chunk');
    if (!parsed.ok) return parsed;
    const chunk = parsed.value;
    const hasTokens = chunk.content !== '' || chunk.tokens.length > 0;
    return {
      ok: true,
      value: {
        ...(hasTokens
          ? {
              tokens: {
                ids: chunk.tokens,
                text: chunk.content,
                ...(chunk.completion_probabilities ? { logprobs: chunk.completion_probabilities.map(generatedLogprobOf) } : {}),
              },
            }
          : {}),
        ...(chunk.stop ? { finish: finishOf(chunk) } : {}),
      },
    };
  },
  slotsPath: '/slots',
  slotState: llamaServerSlotState,
  embeddingsPath: null,
  slots(raw: unknown): Parsed<SlotView[]> {
    const parsed = parsePeerJson(slotsSchema, raw, 'the slots');
    if (!parsed.ok) return parsed;
    return {
      ok: true,
      value: parsed.value.map((s) => {
        const next = Array.isArray(s.next_token) ? s.next_token[0] : s.next_token;
        return {
          slot: s.id,
          state: !s.is_processing ? 'idle' : (next?.n_decoded ?? 0) > 0 ? 'decode' : 'prefill',
          heldTokens: s.n_prompt_tokens ?? 0,
          conversationId: null,
          lastUsed: null,
        };
      }),
    };
  },
};
