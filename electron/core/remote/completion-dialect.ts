/**
 * What each kind of peer speaks, in shared terms: the streamed request it is sent for a generation of
 * token ids, what one chunk of its stream says (StreamPiece: tokens, where it ran, how it finished, the
 * usage), and how it lists its slots. One dialect per kind (llama-server-dialect.ts, openai-dialect.ts);
 * the client (remote-client.ts) only moves bytes and timers. The peer's JSON crosses a process boundary:
 * every chunk is checked by a zod schema (extra fields allowed) and a malformed one is named.
 */
import type { z } from 'zod';
import type { GenerateRequest, SlotView } from '../../../common/engine-protocol.js';
import { firstIssueInWords, inWords } from '../../../common/issue-words.js';

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
  readonly tokens?: { readonly ids: readonly number[]; readonly text: string };
  readonly finish?: PeerFinish;
  readonly usage?: PeerUsage;
  /** An error event inside the stream (its body, for peerRefusal). */
  readonly error?: unknown;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

export interface CompletionDialect {
  /** The streamed completion endpoint. */
  readonly path: string;
  /**
   * The request body. `model` is the peer's name for the model; `contextSize` its per-slot context when
   * known (0 otherwise), for peers that refuse a token budget larger than what is left of it.
   */
  body(request: GenerateRequest, peer: { model: string | null; contextSize: number }): Record<string, unknown>;
  /** One stream chunk's JSON. */
  read(chunk: unknown): Parsed<StreamPiece>;
  /** Where the peer lists its slots; null when it does not. */
  readonly slotsPath: string | null;
  slots(body: unknown): Parsed<SlotView[]>;
}

/** `schema`'s reading of `value`, or its first problem in words naming `what` (e.g. `the chunk: choices[0].text: …`). */
export function parsePeerJson<T>(schema: z.ZodType<T>, value: unknown, what: string): Parsed<T> {
  const result = schema.safeParse(value, { error: inWords });
  return result.success ? { ok: true, value: result.data } : { ok: false, problem: firstIssueInWords(result.error, what).message };
}
