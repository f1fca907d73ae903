/**
 * OpenAI's `logprobs`: what a request asks for and the engine's per-token logprobs in OpenAI's shapes.
 * Chat: `logprobs: true` with `top_logprobs` 0–20 → `choices[].logprobs.content[]` of `{token, logprob,
 * bytes, top_logprobs[]}` (in a stream, each chunk carries its tokens'). Completions: `logprobs` 0–20 →
 * the legacy `{tokens, token_logprobs, top_logprobs: [{text: logprob}], text_offset}`, offsets counted
 * from the start of the completion. The logprobs are the sampler's (after top-k, top-p, min-p,
 * temperature and any grammar), so fewer alternatives than asked come back when it kept fewer.
 */
import { z } from 'zod';
import { MAX_TOP_LOGPROBS, type GeneratedLogprob, type TokenLogprob } from '../../common/engine-protocol.js';
import { HttpError } from './http-error.js';

const topLogprobsSchema = z.number().int().min(0).max(MAX_TOP_LOGPROBS).nullish();
export const chatLogprobsFields = { logprobs: z.boolean().nullish(), top_logprobs: topLogprobsSchema };
export const completionLogprobsFields = { logprobs: topLogprobsSchema };

/** How many alternatives per token a request asks for; undefined when it asks for no logprobs. */
export function requestedLogprobs(body: { logprobs?: boolean | number | null | undefined; top_logprobs?: number | null | undefined }): number | undefined {
  if (typeof body.logprobs === 'number') return body.logprobs;
  if (body.logprobs === true) return body.top_logprobs ?? 0;
  if (body.top_logprobs !== undefined && body.top_logprobs !== null) {
    throw new HttpError(400, 'top_logprobs: needs logprobs: true', 'invalid_request_error', 'top_logprobs');
  }
  return undefined;
}

const bytesOf = (text: string): number[] => [...Buffer.from(text, 'utf8')];
const chatEntry = (entry: TokenLogprob) => ({ token: entry.text, logprob: entry.logprob, bytes: bytesOf(entry.text) });

/** A chat choice's (or chunk's) `logprobs`. */
export const chatLogprobs = (entries: readonly GeneratedLogprob[], top: number) => ({
  content: entries.map((entry) => ({ ...chatEntry(entry), top_logprobs: entry.top.slice(0, top).map(chatEntry) })),
  refusal: null,
});

/** A completion choice's (or chunk's) `logprobs`; `offset` is where the first token's text starts in the completion. */
export function completionLogprobs(entries: readonly GeneratedLogprob[], top: number, offset: number) {
  const textOffset: number[] = [];
  let at = offset;
  for (const entry of entries) {
    textOffset.push(at);
    at += entry.text.length;
  }
  return {
    tokens: entries.map((entry) => entry.text),
    token_logprobs: entries.map((entry) => entry.logprob),
    top_logprobs: entries.map((entry) => Object.fromEntries(entry.top.slice(0, top).map((t) => [t.text, t.logprob]))),
    text_offset: textOffset,
  };
}
