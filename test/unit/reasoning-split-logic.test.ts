/**
 * The reasoning split (pure logic): the parses llama.cpp's tests/test-chat.cpp expects for thinking
 * templates (Qwen3.5's open thinking, <think> blocks, gpt-oss's channels), the same whether the text comes
 * whole or a character at a time.
 */
import { describe, expect, it } from 'vitest';
import { ReasoningSplit, splitReasoning } from '../../common/reasoning-split.js';

const think = { start: '<think>', end: '</think>' };
const harmony = { start: '<|channel|>analysis<|message|>', end: '<|end|>' };

/** The split of `text` pushed one character at a time, events joined by kind and kept in order. */
function streamed(tags: typeof think, open: boolean, text: string): { reasoning: string; content: string; order: string[] } {
  const split = new ReasoningSplit(tags, open);
  const events = [...[...text].flatMap((c) => split.push(c)), ...split.end()];
  const order = events.map((e) => e.type).filter((type, i, all) => type !== all[i - 1]);
  const of = (type: string): string => events.filter((e) => e.type === type).map((e) => e.text).join('');
  return { reasoning: of('reasoning'), content: of('content'), order };
}

const cases: { name: string; tags: typeof think; open: boolean; text: string; reasoning: string; content: string }[] = [
  { name: 'a prompt that opened the thinking (Qwen3.5, DeepSeek R1)', tags: think, open: true, text: "I'm\nthinking\n</think>\n\nHello, world!\nWhat's up?", reasoning: "I'm\nthinking", content: "Hello, world!\nWhat's up?" },
  { name: 'a <think> block the answer opens', tags: think, open: false, text: "<think>I'm\nthinking</think>Hello, world!\nWhat's up?", reasoning: "I'm\nthinking", content: "Hello, world!\nWhat's up?" },
  { name: 'an answer with no thinking', tags: think, open: false, text: "Hello, world!\nWhat's up?", reasoning: '', content: "Hello, world!\nWhat's up?" },
  { name: 'thinking cut off before it closed', tags: think, open: true, text: "I'm\nthinking ", reasoning: "I'm\nthinking", content: '' },
  { name: 'a tag later in the answer stays content', tags: think, open: false, text: 'Use <think> tags.', reasoning: '', content: 'Use <think> tags.' },
  {
    name: "gpt-oss's analysis then final channel",
    tags: harmony,
    open: false,
    text: "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
  },
  { name: "gpt-oss's final channel alone", tags: harmony, open: false, text: "<|channel|>final<|message|>Hello, world!\nWhat's up?", reasoning: '', content: "Hello, world!\nWhat's up?" },
  { name: "gpt-oss's commentary channel", tags: harmony, open: false, text: "<|channel|>commentary<|message|>Hello, world!\nWhat's up?", reasoning: '', content: "Hello, world!\nWhat's up?" },
  { name: "gpt-oss's analysis cut off", tags: harmony, open: false, text: "<|channel|>analysis<|message|>I'm\nthinking", reasoning: "I'm\nthinking", content: '' },
];

describe('splitReasoning', () => {
  for (const c of cases) {
    it(c.name, () => {
      expect(splitReasoning(c.tags, c.open, c.text)).toEqual({ reasoning: c.reasoning, content: c.content });
      const { reasoning, content, order } = streamed(c.tags, c.open, c.text);
      expect({ reasoning, content }).toEqual({ reasoning: c.reasoning, content: c.content });
      // Reasoning first, then content, never back.
      expect(order).toEqual([...(c.reasoning ? ['reasoning'] : []), ...(c.content ? ['content'] : [])]);
    });
  }

  it('sends reasoning as it comes, holding only what could be the end tag', () => {
    const split = new ReasoningSplit(think, true);
    expect(split.push('Let me see')).toEqual([{ type: 'reasoning', text: 'Let me see' }]);
    expect(split.push(' now </thi')).toEqual([{ type: 'reasoning', text: ' now' }]);
    expect(split.push('nk>\n\nYes')).toEqual([{ type: 'content', text: 'Yes' }]);
  });
});

describe('ReasoningSplit, token by token', () => {
  it('drops the whitespace after the start tag when it comes in a later piece', () => {
    const split = new ReasoningSplit(think, false);
    const events = ['<think>', '\n', 'plan', ' the steps', '\n', '</think>', '\n\n', 'the answer'].flatMap((piece) => split.push(piece));
    expect([...events, ...split.end()]).toEqual([
      { type: 'reasoning', text: 'plan' },
      { type: 'reasoning', text: ' the steps' },
      { type: 'content', text: 'the answer' },
    ]);
  });
});
