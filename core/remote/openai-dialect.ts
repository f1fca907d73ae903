/**
 * OpenAI-style peers: `POST /v1/completions` streamed with token ids as the prompt and usage in a last
 * chunk (`stream_options.include_usage`), whose `prompt_tokens_details.cached_tokens` is the cache hit
 * where the server reports it (vLLM with prefix caching, SGLang). Text comes without token ids.
 * A Manifold node speaks the same with its extensions (and takes llama-server's `grammar`): `return_tokens` puts the ids under `manifold.tokens`
 * (with each chunk, and all of them on the finishing one, with the slot and llama-server-style timings),
 * and `GET /slots` is its global slot view. vLLM/SGLang take top_k, min_p, repetition_penalty and
 * ignore_eos as extensions; they are sent only where they change something. OpenAI's own penalties and
 * logit_bias go to every kind (the window the penalties look at is the peer's own: OpenAI counts the
 * text generated so far, llama.cpp's last `repeat_last_n` tokens).
 */
import { z } from 'zod';
import { tokenIdsSchema } from '../../common/token-ids.js';
import { MAX_GENERATE_TOKENS, slotViewSchema, type GenerateRequest, type SlotView } from '../../common/engine-protocol.js';
import { parsePeerJson, type CompletionDialect, type Parsed, type PeerFinish, type StreamPiece } from './completion-dialect.js';

const count = z.number().int().nonnegative();

const usageSchema = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  prompt_tokens_details: z.object({ cached_tokens: count.nullish() }).nullish(),
});

/** Manifold's `manifold` extension: named as llama-server names its timings. */
const manifoldSchema = z.object({
  tokens: tokenIdsSchema().optional(),
  slot: z.number().int().nonnegative().nullish(),
  timings: z
    .object({
      cache_n: count,
      prompt_n: count,
      prompt_ms: z.number().nonnegative(),
      predicted_n: count,
      predicted_ms: z.number().nonnegative(),
      predicted_per_second: z.number(),
    })
    .optional(),
});

const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        text: z.string().nullish(),
        finish_reason: z.string().nullish(),
        /** vLLM: the stop string (or token id) that ended the completion. */
        stop_reason: z.union([z.string(), z.number()]).nullish(),
      }),
    )
    .default([]),
  usage: usageSchema.nullish(),
  manifold: manifoldSchema.optional(),
});

const manifoldSlotsSchema = z.array(slotViewSchema);

function readChunk(raw: unknown): Parsed<StreamPiece> {
  if (typeof raw === 'object' && raw !== null && 'error' in raw) return { ok: true, value: { error: raw } };
  const parsed = parsePeerJson(chunkSchema, raw, 'the chunk');
  if (!parsed.ok) return parsed;
  const { choices, usage, manifold } = parsed.value;
  const choice = choices[0];
  const finishing = choice?.finish_reason !== undefined && choice.finish_reason !== null;
  const text = choice?.text ?? '';
  // Each non-finishing choice is one step of the stream (Manifold sends one per token, even with its text held back).
  const tokens = choice && (!finishing || text !== '') ? { ids: finishing ? [] : (manifold?.tokens ?? []), text } : undefined;
  const timings = manifold?.timings;
  const finish: PeerFinish | undefined = finishing
    ? {
        reason: choice.finish_reason === 'length' ? 'length' : 'stop',
        stoppedBy: typeof choice.stop_reason === 'string' ? choice.stop_reason : null,
        completionIds: manifold?.tokens ?? null,
        slot: manifold?.slot ?? null,
        reusedTokens: timings?.cache_n ?? null,
        completionTokens: timings?.predicted_n ?? null,
        timings: timings
          ? {
              prefillMs: timings.prompt_ms,
              prefillTokens: timings.prompt_n,
              decodeMs: timings.predicted_ms,
              decodeTokensPerSecond: timings.predicted_per_second,
            }
          : null,
      }
    : undefined;
  return {
    ok: true,
    value: {
      ...(tokens ? { tokens } : {}),
      ...(finish ? { finish } : {}),
      ...(usage
        ? {
            usage: {
              promptTokens: usage.prompt_tokens,
              completionTokens: usage.completion_tokens,
              cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? null,
            },
          }
        : {}),
    },
  };
}

/** The budget a peer that checks it against its context is sent: what is left of the slot, or none for "no limit" when the context is unknown. */
function tokenBudget(request: GenerateRequest, contextSize: number): { max_tokens?: number } {
  if (contextSize > 0) return { max_tokens: Math.max(1, Math.min(request.maxTokens, contextSize - request.tokens.length)) };
  return request.maxTokens < MAX_GENERATE_TOKENS ? { max_tokens: request.maxTokens } : {};
}

function commonBody(request: GenerateRequest, model: string | null): Record<string, unknown> {
  return {
    ...(model !== null ? { model } : {}),
    prompt: request.tokens,
    stream: true,
    stream_options: { include_usage: true },
    temperature: request.sampling.temperature,
    top_p: request.sampling.topP,
    ...(request.sampling.seed !== undefined ? { seed: request.sampling.seed } : {}),
    ...(request.stop.length > 0 ? { stop: request.stop } : {}),
    ...(request.sampling.presencePenalty !== 0 ? { presence_penalty: request.sampling.presencePenalty } : {}),
    ...(request.sampling.frequencyPenalty !== 0 ? { frequency_penalty: request.sampling.frequencyPenalty } : {}),
    ...(request.sampling.logitBias.length > 0 ? { logit_bias: Object.fromEntries(request.sampling.logitBias) } : {}),
  };
}

export const openAiDialect: CompletionDialect = {
  path: '/v1/completions',
  takesGrammar: false,
  takesLogprobs: false,
  body: (request, peer) => ({
    ...commonBody(request, peer.model),
    ...tokenBudget(request, peer.contextSize),
    ...(request.sampling.topK > 0 ? { top_k: request.sampling.topK } : {}),
    ...(request.sampling.minP > 0 ? { min_p: request.sampling.minP } : {}),
    ...(request.sampling.repeatPenalty > 0 && request.sampling.repeatPenalty !== 1 ? { repetition_penalty: request.sampling.repeatPenalty } : {}),
    ...(request.ignoreEos ? { ignore_eos: true } : {}),
  }),
  read: readChunk,
  slotsPath: null,
  slotState: null,
  embeddingsPath: '/v1/embeddings',
  slots: () => ({ ok: true, value: [] }),
};

export const manifoldDialect: CompletionDialect = {
  path: '/v1/completions',
  takesGrammar: true,
  takesLogprobs: false,
  body: (request, peer) => ({
    ...commonBody(request, peer.model),
    max_tokens: request.maxTokens,
    return_tokens: true,
    top_k: request.sampling.topK,
    min_p: request.sampling.minP,
    repeat_penalty: request.sampling.repeatPenalty,
    repeat_last_n: request.sampling.repeatLastN,
    ignore_eos: request.ignoreEos,
    ...(request.grammar !== undefined ? { grammar: request.grammar } : {}),
  }),
  read: readChunk,
  slotsPath: '/slots',
  slotState: null,
  embeddingsPath: '/v1/embeddings',
  slots(raw: unknown): Parsed<SlotView[]> {
    const parsed = parsePeerJson(manifoldSlotsSchema, raw, 'the slots');
    if (!parsed.ok) return parsed;
    // The node's global view (slots numbered across its replicas, as its finishing chunks number them).
    return {
      ok: true,
      value: parsed.value.map(({ slot, state, heldTokens, conversationId, lastUsed }) => ({ slot, state, heldTokens, conversationId, lastUsed })),
    };
  },
};
