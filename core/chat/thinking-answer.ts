/**
 * A thinking model's answer in the chat window: its text split as it streams into the thinking and the
 * answer (common/reasoning-split.ts), and how long it thought — from the first token to the first token of
 * the answer, or to now while it still thinks.
 */
import { ReasoningSplit, splitReasoning, type ReasoningEvent } from '../../common/reasoning-split.js';
import type { ThinkingTags } from '../../common/tokenizer-protocol.js';

export class ThinkingAnswer {
  private readonly split: ReasoningSplit;
  private startedAt: number | null = null;
  private endedAt: number | null = null;

  constructor(
    private readonly tags: ThinkingTags,
    private readonly open: boolean,
  ) {
    this.split = new ReasoningSplit(tags, open);
  }

  push(text: string): ReasoningEvent[] {
    this.startedAt ??= performance.now();
    const events = this.split.push(text);
    if (this.endedAt === null && events.some((e) => e.type === 'content')) this.endedAt = performance.now();
    return events;
  }

  /** How long it thought (so far), in milliseconds; 0 before the first token. */
  thinkingMs(): number {
    return this.startedAt === null ? 0 : Math.round((this.endedAt ?? performance.now()) - this.startedAt);
  }

  /** The finished answer's content, and its thinking with its time when it thought. */
  finish(text: string): { content: string; reasoning?: string; thinkingMs?: number } {
    const { reasoning, content } = splitReasoning(this.tags, this.open, text);
    return reasoning ? { content, reasoning, thinkingMs: this.thinkingMs() } : { content };
  }
}
