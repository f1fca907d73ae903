/**
 * A thinking model's answer split into its reasoning and its content, as llama-server's `deepseek`
 * reasoning format splits it: the text between the template's thinking tags at the start of the answer
 * (or from the start, when the prompt already opened them) is `reasoning_content`, the rest `content`,
 * neither with the tags, the whitespace next to the tags dropped; where the format's tool calls also end
 * the thinking (`endBefore`), they begin the content; what a template puts around its answer (`answer`:
 * gpt-oss's final channel header, Command R7B's response markers) is dropped. Works as the text streams in: a possible
 * tag or trailing whitespace is held until the text after it decides. Pure: no model, no I/O.
 */
import type { ThinkingTags } from './tokenizer-protocol.js';

export type ReasoningEvent = { type: 'reasoning' | 'content'; text: string };

/** The length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagAt(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (tag.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}

type State = 'before' | 'reasoning' | 'afterReasoning' | 'content';

export class ReasoningSplit {
  private state: State;
  private held = '';
  private reasoningBegun = false;
  /** What ends the thinking: the end tag (dropped) and the markers that begin the answer (kept). */
  private readonly ends: readonly { marker: string; kept: boolean }[];
  /** Whether the answer's closing marker (`tags.answer`) may still come. */
  private answerOpen = true;

  /** `open`: the prompt ended inside the thinking tags, so the answer starts in its reasoning. */
  constructor(
    private readonly tags: ThinkingTags,
    open: boolean,
  ) {
    this.state = open ? 'reasoning' : 'before';
    this.ends = [...(tags.end ? [{ marker: tags.end, kept: false }] : []), ...(tags.endBefore ?? []).map((marker) => ({ marker, kept: true }))];
  }

  /** Whether `text` may still become one of the answer's headers (held until it decides). */
  private mayBeHeader(text: string): boolean {
    return this.tags.answer?.headers.some((header) => header.startsWith(text)) ?? false;
  }

  push(text: string): ReasoningEvent[] {
    this.held += text;
    return this.drain(false);
  }

  /** What is left once the answer ended: held text goes out as what it was. */
  end(): ReasoningEvent[] {
    return this.drain(true);
  }

  private drain(final: boolean): ReasoningEvent[] {
    const events: ReasoningEvent[] = [];
    const emit = (type: ReasoningEvent['type'], text: string): void => {
      if (!text) return;
      const last = events.at(-1);
      if (last?.type === type) last.text += text;
      else events.push({ type, text });
    };
    for (;;) {
      const before = this.state + this.held;
      if (this.state === 'before') {
        const visible = this.held.replace(/^\s+/, '');
        const { start } = this.tags;
        if (start && visible.startsWith(start)) {
          this.held = visible.slice(start.length).replace(/^\s+/, '');
          this.state = 'reasoning';
        } else if (!final && (visible === '' || (start !== '' && start.startsWith(visible)) || this.mayBeHeader(visible))) {
          break;
        } else {
          this.state = 'afterReasoning';
          this.held = visible === '' ? '' : this.held;
        }
      } else if (this.state === 'reasoning') {
        // Whitespace right after the start tag (or at the start of an opened thinking) is dropped, however it is split.
        if (!this.reasoningBegun) {
          this.held = this.held.replace(/^\s+/, '');
          if (this.held === '' && !final) break;
          this.reasoningBegun = true;
        }
        const { end, endBefore = [] } = this.tags;
        // The earliest end: the end tag is dropped; a marker that ends the thinking before it begins the answer is kept.
        let first: { marker: string; kept: boolean; at: number } | null = null;
        for (const { marker, kept } of this.ends) {
          const at = this.held.indexOf(marker);
          if (at >= 0 && (first === null || at < first.at)) first = { marker, kept, at };
        }
        if (first) {
          emit('reasoning', this.held.slice(0, first.at).trimEnd());
          this.held = first.kept ? this.held.slice(first.at) : this.held.slice(first.at + first.marker.length).replace(/^\s+/, '');
          this.state = 'afterReasoning';
        } else if (final) {
          emit('reasoning', this.held.trimEnd());
          this.held = '';
          break;
        } else {
          // Hold what could be the start of the end tag, and trailing whitespace (dropped if the tag follows).
          let keep = Math.max(partialTagAt(this.held, end), ...endBefore.map((marker) => partialTagAt(this.held, marker)));
          while (keep < this.held.length && /\s/.test(this.held[this.held.length - keep - 1]!)) keep++;
          emit('reasoning', this.held.slice(0, this.held.length - keep));
          this.held = this.held.slice(this.held.length - keep);
          break;
        }
      } else if (this.state === 'afterReasoning') {
        const text = this.held.replace(/^\s+/, '');
        if (!final && (text === '' || this.mayBeHeader(text))) break;
        const header = this.tags.answer?.headers.find((h) => text.startsWith(h));
        this.held = header ? text.slice(header.length) : text;
        this.state = 'content';
      } else {
        // The answer's closing marker is dropped (what follows it, a tool call, stays content); a part of it is held.
        const close = this.answerOpen ? this.tags.answer?.end : undefined;
        const at = close ? this.held.indexOf(close) : -1;
        if (close && at >= 0) {
          emit('content', this.held.slice(0, at));
          this.held = this.held.slice(at + close.length);
          this.answerOpen = false;
          continue;
        }
        const keep = close && !final ? partialTagAt(this.held, close) : 0;
        emit('content', this.held.slice(0, this.held.length - keep));
        this.held = this.held.slice(this.held.length - keep);
        break;
      }
      if (this.state + this.held === before) break;
    }
    return events;
  }
}

/** A whole answer's reasoning and content. */
export function splitReasoning(tags: ThinkingTags, open: boolean, text: string): { reasoning: string; content: string } {
  const split = new ReasoningSplit(tags, open);
  const events = [...split.push(text), ...split.end()];
  const of = (type: ReasoningEvent['type']): string =>
    events
      .filter((e) => e.type === type)
      .map((e) => e.text)
      .join('');
  return { reasoning: of('reasoning'), content: of('content') };
}
