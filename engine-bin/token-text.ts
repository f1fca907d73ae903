/**
 * Incremental detokenizing for streaming: tokens that end inside a multi-byte UTF-8 character (byte-fallback
 * pieces) are held until the character is complete, so streamed text never carries a broken character.
 */

export type Detokenize = (tokens: readonly number[], previous: readonly number[]) => string;

const REPLACEMENT = '\uFFFD';
/** A UTF-8 character spans at most 4 byte tokens. */
const MAX_PENDING = 4;

export class TokenTextStream {
  private readonly emitted: number[] = [];
  private pending: number[] = [];

  constructor(private readonly detokenize: Detokenize) {}

  /** Adds one token; returns the text that is complete now (possibly empty). */
  push(token: number): string {
    this.pending.push(token);
    const text = this.detokenize(this.pending, this.emitted);
    if (text.endsWith(REPLACEMENT) && this.pending.length < MAX_PENDING) return '';
    return this.take(text);
  }

  /** The text of tokens still held, when the stream ends. */
  flush(): string {
    return this.pending.length ? this.take(this.detokenize(this.pending, this.emitted)) : '';
  }

  private take(text: string): string {
    this.emitted.push(...this.pending);
    this.pending = [];
    return text;
  }
}
