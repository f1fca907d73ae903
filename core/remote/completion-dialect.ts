/**
 * What each kind of peer speaks, in shared terms: the streamed request it is sent for a generation of
 * token ids, what one chunk of its stream says (StreamPiece: tokens, where it ran, how it finished, the
 * usage), how it lists its slots and, where it can, how one slot's state is saved and restored. One dialect per kind (llama-server-dialect.ts,
 * openai-dialect.ts);
 * the client (remote-client.ts) only moves bytes and timers. The peer's JSON crosses a process boundary:
 * every chunk is checked by a zod schema (extra fields allowed) and a malformed one is named.
 */
import { z } from 'zod';
import type { GeneratedLogprob, GenerateRequest, SlotView } from '../../common/engine-protocol.js';
import { firstIssueInWords, inWords } from '../../common/issue-words.js';

export interface PeerTimings {
  readonly prefillMs: number;
  /** Prompt tokens the peer evaluated (not taken from its cache). */
  readonly prefillTokens: number;
  readonly decodeMs: number;
  readonly decodeTokensPerSecond: number;
}

export interface PeerFinish {
  readonly reason: 'stop' | 'length';
  /** The stop string that ended it, when the peer says. */
  readonly stoppedBy: string | null;
  /** Every completion token id, when the peer gives them at the end. */
  readonly completionIds: readonly number[] | null;
  /** The slot that served it, when the peer says. */
  readonly slot: number | null;
  /** Prompt tokens the peer kept from its cache, when it says. */
  readonly reusedTokens: number | null;
  readonly completionTokens: number | null;
  readonly timings: PeerTimings | null;
}

export interface PeerUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedTokens: number | null;
}

/** What one chunk of a generation stream says; a chunk may say several things at once. */
export interface StreamPiece {
  /** Generated text and its token ids (empty when the peer gives no ids with each chunk). */
  readonly tokens?: { readonly ids: readonly number[]; readonly text: string; readonly logprobs?: GeneratedLogprob[] };
  readonly finish?: PeerFinish;
  readonly usage?: PeerUsage;
  /** An error event inside the stream (its body, for peerRefusal). */
  readonly error?: unknown;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

export interface CompletionDialect {
  /** The streamed completion endpoint. */
  readonly path: string;
  /** Whether the peer constrains output by a request's GBNF `grammar` (llama-server and Manifold do; an OpenAI-only peer cannot). */
  readonly takesGrammar: boolean;
  /** Whether the peer reports each token's logprobs (llama-server's `n_probs`); Manifold and OpenAI peers are not asked. */
  readonly takesLogprobs: boolean;
  /**
   * The request body. `model` is the peer's name for the model; `contextSize` its per-slot context when
   * known (0 otherwise), for peers that refuse a token budget larger than what is left of it; `slot` the
   * slot to run in (a local llama-server's slot just restored from a file), absent to leave it to the peer.
   */
  body(request: GenerateRequest, peer: { model: string | null; contextSize: number; slot?: number }): Record<string, unknown>;
  /** One stream chunk's JSON. */
  read(chunk: unknown): Parsed<StreamPiece>;
  /** Where the peer lists its slots; null when it does not. */
  readonly slotsPath: string | null;
  slots(body: unknown): Parsed<SlotView[]>;
  /** Saving, restoring and filling one slot (a local llama-server's live resize); null where the peer has none. */
  readonly slotState: SlotStateDialect | null;
  /** Where the peer serves embeddings of token-id inputs (OpenAI's `/v1/embeddings`); null where it is not asked (llama-server runs without `--embeddings`). */
  readonly embeddingsPath: string | null;
}

const embeddingsAnswerSchema = z.object({ data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })) });

/** The vectors of an OpenAI embeddings answer, in input order (`count` inputs were sent). */
export function readEmbeddings(body: unknown, count: number): Parsed<number[][]> {
  const parsed = parsePeerJson(embeddingsAnswerSchema, body, 'the embeddings');
  if (!parsed.ok) return parsed;
  const vectors: number[][] = [];
  for (const item of parsed.value.data) vectors[item.index] = item.embedding;
  const missing = Array.from({ length: count }, (_, i) => i).find((i) => !vectors[i]);
  return missing === undefined && vectors.length === count
    ? { ok: true, value: vectors }
    : { ok: false, problem: `the embeddings: ${count} inputs were sent and ${parsed.value.data.length} vectors came back` };
}

/** What one slot save or restore did. */
export interface SlotStateResult {
  readonly tokens: number;
  readonly bytes: number;
  readonly ms: number;
}

export interface SlotStateDialect {
  /** Where slot `slot`'s KV state is saved to or restored from a file named in the body. */
  actionPath(slot: number, action: 'save' | 'restore'): string;
  actionBody(filename: string): Record<string, unknown>;
  actionResult(body: unknown): Parsed<SlotStateResult>;
  /** A non-streamed request on `path` that evaluates `tokens` into slot `slot` and keeps them there. */
  fillBody(slot: number, tokens: readonly number[]): Record<string, unknown>;
}

/** `schema`'s reading of `value`, or its first problem in words naming `what` (e.g. `the chunk: choices[0].text: …`). */
export function parsePeerJson<T>(schema: z.ZodType<T>, value: unknown, what: string): Parsed<T> {
  const result = schema.safeParse(value, { error: inWords });
  return result.success ? { ok: true, value: result.data } : { ok: false, problem: firstIssueInWords(result.error, what).message };
}
