/**
 * Coalescing by event-loop turn: what is pushed during one turn is handed on as one batch when the turn
 * ends (the `schedule` given, `setImmediate` in Node), so a lone item goes at once, in its own batch, and
 * items that arrive together (tokens of several slots decoded in one step, messages read in one IPC
 * chunk) travel together. `mergeTokenChunks` folds a batch of one stream's token chunks into one chunk.
 * Used by the engine child's transport (one IPC message a turn) and the front's SSE writer (one event).
 */

/** Runs `flush` once the current turn of the event loop is over. */
export type TurnScheduler = (flush: () => void) => void;

export class TurnBatch<Item> {
  private items: Item[] = [];

  constructor(
    private readonly handOn: (items: Item[]) => void,
    private readonly schedule: TurnScheduler,
  ) {}

  push(item: Item): void {
    this.items.push(item);
    if (this.items.length === 1) this.schedule(() => this.flush());
  }

  /** Hands on what is held now, before the turn ends (before a stream's last word is written). */
  flush(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
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
