/**
 * Coalescing by event-loop turn: what is pushed during one turn is handed on as one batch when the turn
 * ends (the `schedule` given, `setImmediate` in Node), so a lone item goes at once, in its own batch, and
 * items that arrive together (tokens of several slots decoded in one step, messages read in one IPC
 * chunk) travel together. `mergeTokenChunks` folds a batch of one stream's token chunks into one chunk.
 * Used by the engine child's transport (one IPC message a turn) and the front's SSE writer (one event).
 *
 * With a spacing, an item pushed to go after the `gap` (a stream's later tokens) waits until `minGapMs`
 * after the last batch went, when that is later than its turn's end: a fast stream travels in batches at
 * most every `minGapMs`, a slow one (an item every `minGapMs` or more) item by item with nothing added to
 * its latency. An item pushed for its `turn` takes everything held with it at its turn's end; one pushed
 * to go `now` (a stream's first token) takes it at once, without waiting for the rest of the turn.
 */

/**
 * The longest a stream's later tokens are held after the batch before them: a frame of a 60 Hz display.
 * The engine child's transport spaces its IPC messages by it, and core paces its reads of a peer's
 * stream (a llama-server engine, a remote replica) by it. SGLang (`--stream-interval`) and vLLM
 * (`stream_n`) batch a stream by a count of tokens; by time, a slow stream is never held.
 */
export const STREAM_GAP_MS = 16;

/** Runs `flush` once the current turn of the event loop is over. */
export type TurnScheduler = (flush: () => void) => void;

export interface BatchSpacing {
  readonly minGapMs: number;
  readonly now: () => number;
  /** Runs `flush` after `ms`; returns what cancels it. */
  readonly after: (flush: () => void, ms: number) => () => void;
}

/**
 * When a pushed item is handed on: `now`, with whatever is held (what a client waits on before anything
 * else, such as a stream's first token: the rest of the turn may be the next token's whole setup); at its
 * `turn`'s end, with what else comes in the turn; or after the `gap` (only with a spacing).
 */
export type HandOnAt = 'now' | 'turn' | 'gap';

export class TurnBatch<Item> {
  private items: Item[] = [];
  private turnFlushPending = false;
  private cancelWait: (() => void) | null = null;
  private lastHandOnAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly handOn: (items: Item[]) => void,
    private readonly schedule: TurnScheduler,
    private readonly spacing?: BatchSpacing,
  ) {}

  /** `at`: when the item goes (HandOnAt); `gap` without a spacing is `turn`. */
  push(item: Item, at: HandOnAt = 'turn'): void {
    this.items.push(item);
    if (at === 'now') return this.flush();
    if (this.turnFlushPending) return;
    const wait = at === 'gap' && this.spacing ? this.lastHandOnAt + this.spacing.minGapMs - this.spacing.now() : 0;
    if (wait > 0) {
      this.cancelWait ??= this.spacing!.after(() => this.flush(), wait);
      return;
    }
    this.turnFlushPending = true;
    this.schedule(() => {
      this.turnFlushPending = false;
      this.flush();
    });
  }

  /** Hands on what is held now, before the turn ends (before a stream's last word is written). */
  flush(): void {
    this.cancelWait?.();
    this.cancelWait = null;
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    if (this.spacing) this.lastHandOnAt = this.spacing.now();
    this.handOn(items);
  }
}

export interface TokenChunk<L = unknown> {
  tokens: number[];
  text: string;
  /** Each token's logprobs, when the request asked for them. */
  logprobs?: L[] | undefined;
}

/** One chunk carrying the tokens, text and logprobs of `chunks`, in order. */
export function mergeTokenChunks<L>(chunks: readonly TokenChunk<L>[]): TokenChunk<L> {
  if (chunks.length === 1) return chunks[0]!;
  const logprobs = chunks.some((c) => c.logprobs) ? chunks.flatMap((c) => c.logprobs ?? []) : undefined;
  return { tokens: chunks.flatMap((c) => c.tokens), text: chunks.map((c) => c.text).join(''), ...(logprobs ? { logprobs } : {}) };
}
