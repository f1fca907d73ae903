/**
 * One remote generation's account, built from its stream pieces as they come: the text and token ids
 * so far, when the first and last tokens came, how the peer says it finished and what it used; at the
 * end, the GenerateDone a local engine would have given. Where the peer gives no timings they are
 * measured here (prefill: until the first token, network included, and no wait); where it gives its own
 * (its prompt time starts when its slot starts the prompt), the wait is the rest of the time to the first
 * token: the hop, the peer's HTTP and its wait for a slot. Where it gives no ids the completion's ids are
 * unknown ([]) and the slot is taken to hold the prompt only.
 */
import type { GenerateDone, GenerateRequest } from '../../common/engine-protocol.js';
import type { StartedInfo, TokenChunk } from '../engine/engine-client.js';
import type { PeerFinish, PeerUsage, StreamPiece } from './completion-dialect.js';

export class GenerationTally {
  private text = '';
  private readonly ids: number[] = [];
  /** False once a chunk carried text without its ids. */
  private idsComplete = true;
  private steps = 0;
  private firstTokenAt: number | null = null;
  private lastTokenAt: number | null = null;
  private finishValue: PeerFinish | null = null;
  private usage: PeerUsage | null = null;

  constructor(
    private readonly request: GenerateRequest,
    private readonly sentAt: number,
  ) {}

  /** Takes one piece; returns the chunk to hand on when it carries tokens. */
  add(piece: StreamPiece, now: number): TokenChunk | undefined {
    if (piece.usage) this.usage = piece.usage;
    if (piece.finish) this.finishValue = piece.finish;
    if (!piece.tokens) return undefined;
    const { ids, text, logprobs } = piece.tokens;
    this.firstTokenAt ??= now;
    this.lastTokenAt = now;
    this.steps++;
    this.text += text;
    this.ids.push(...ids);
    if (ids.length === 0 && text !== '') this.idsComplete = false;
    return { tokens: [...ids], text, ...(logprobs ? { logprobs } : {}) };
  }

  get tokensSeen(): boolean {
    return this.firstTokenAt !== null;
  }

  get finished(): boolean {
    return this.finishValue !== null;
  }

  /**
   * Whether the peer's next events may be held for `gapMs` (read a gap apart). Only once the stream's
   * pace is known (two events with tokens), only while at least two of its events come in a gap (a
   * slower stream, or a peer that already sends a gap's tokens together, is read as it comes: holding
   * it would add wake-ups, not save them), only before it finished, and only while more than two gaps
   * of its token budget (the request's max tokens) are left at its pace in tokens, so a stream that ends
   * at its budget has its last tokens read as they come. A stream that ends on its own (end of
   * generation, a stop string) cannot be foreseen: its last tokens may wait up to a gap.
   */
  mayHold(gapMs: number): boolean {
    if (this.firstTokenAt === null || this.lastTokenAt === null || this.finished || this.steps < 2) return false;
    const tokens = this.idsComplete ? this.ids.length : this.steps;
    if (tokens < 2) return false;
    const elapsed = this.lastTokenAt - this.firstTokenAt;
    const msPerEvent = elapsed / (this.steps - 1);
    const msPerToken = elapsed / (tokens - 1);
    return 2 * msPerEvent <= gapMs && (this.request.maxTokens - tokens) * msPerToken > 2 * gapMs;
  }

  /** What `started` resolves with: known once the peer has named its slot. */
  get started(): StartedInfo | undefined {
    const slot = this.finishValue?.slot;
    return slot === null || slot === undefined ? undefined : { slot, reusedTokens: this.reusedTokens, queuedMs: 0 };
  }

  private get reusedTokens(): number {
    return this.finishValue?.reusedTokens ?? this.usage?.cachedTokens ?? 0;
  }

  /** The result; `cancelled` when the request was cancelled (whatever came before stays). */
  done(cancelled: boolean, now: number): GenerateDone {
    const finish = this.finishValue;
    const promptTokens = this.usage?.promptTokens ?? this.request.tokens.length;
    const completionIds = finish?.completionIds ?? (this.idsComplete ? this.ids : []);
    const idsKnown = finish?.completionIds != null || (this.idsComplete && (this.ids.length > 0 || this.steps === 0));
    const completionTokens = this.usage?.completionTokens ?? finish?.completionTokens ?? (idsKnown ? completionIds.length : this.steps);
    const reused = this.reusedTokens;
    const firstAt = this.firstTokenAt ?? now;
    const decodeMs = (this.lastTokenAt ?? firstAt) - firstAt;
    const timings = finish?.timings ?? {
      prefillMs: firstAt - this.sentAt,
      prefillTokens: Math.max(0, this.request.tokens.length - reused),
      decodeMs,
      decodeTokensPerSecond: decodeMs > 0 ? ((completionTokens - 1) * 1000) / decodeMs : 0,
    };
    // The wait: what of the time to the first token the prefill does not account for (none where it is measured here).
    const queuedMs = this.firstTokenAt === null ? 0 : Math.max(0, this.firstTokenAt - this.sentAt - timings.prefillMs);
    return {
      finishReason: cancelled ? 'cancelled' : (finish?.reason ?? 'stop'),
      stoppedBy: cancelled ? null : (finish?.stoppedBy ?? null),
      text: this.text,
      completionTokens: [...completionIds],
      usage: { promptTokens, completionTokens },
      slot: finish?.slot ?? null,
      reusedTokens: reused,
      heldTokens: this.request.tokens.length + (idsKnown ? completionIds.length : 0),
      timings: { queuedMs, ...timings },
    };
  }
}
