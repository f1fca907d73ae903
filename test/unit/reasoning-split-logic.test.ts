/**
 * The reasoning split (pure logic): the parses llama.cpp's tests/test-chat.cpp expects for thinking
 * templates (Qwen3.5's open thinking, <think> blocks, gpt-oss's channels), the same whether the text comes
 * whole or a character at a time.
 */
import { describe, expect, it } from 'vitest';
import { ReasoningSplit, splitReasoning } from '../../common/reasoning-split.js';
import { answerWrapper } from '../../engine-bin/template-reasoning.js';

const think = { start: '<think>', end: '</think>' };
// gpt-oss's tags as the tokenizer child gives them: its final and commentary channels' headers around the answer.
const harmony = { start: '<|channel|>analysis<|message|>', end: '<|end|>', answer: answerWrapper('{{ "<|channel|>" }}')! };

/** The split of `text` pushed one character at a time, events joined by kind and kept in order. */
function streamed(tags: typeof think, open: boolean, text: string): { reasoning: string; content: string; order: string[] } {
  const split = new ReasoningSplit(tags, open);
  const events = [...[...text].flatMap((c) => split.push(c)), ...split.end()];
  const order = events.map((e) => e.type).filter((type, i, all) => type !== all[i - 1]);
  const of = (type: string): string =>
    events
      .filter((e) => e.type === type)
      .map((e) => e.text)
      .join('');
  return { reasoning: of('reasoning'), content: of('content'), order };
}

const cases: { name: string; tags: typeof think; open: boolean; text: string; reasoning: string; content: string }[] = [
  {
    name: 'a prompt that opened the thinking (Qwen3.5, DeepSeek R1)',
    tags: think,
    open: true,
    text: "I'm\nthinking\n</think>\n\nHello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
  },
  {
    name: 'a <think> block the answer opens',
    tags: think,
    open: false,
    text: "<think>I'm\nthinking</think>Hello, world!\nWhat's up?",
    reasoning: "I'm\nthinking",
    content: "Hello, world!\nWhat's up?",
  },
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
  {
    name: "gpt-oss's final channel alone",
    tags: harmony,
    open: false,
    text: "<|channel|>final<|message|>Hello, world!\nWhat's up?",
    reasoning: '',
    content: "Hello, world!\nWhat's up?",
  },
  {
    name: "gpt-oss's commentary channel",
    tags: harmony,
    open: false,
    text: "<|channel|>commentary<|message|>Hello, world!\nWhat's up?",
    reasoning: '',
    content: "Hello, world!\nWhat's up?",
  },
  {
    name: "gpt-oss's analysis cut off",
    tags: harmony,
    open: false,
    text: "<|channel|>analysis<|message|>I'm\nthinking",
    reasoning: "I'm\nthinking",
    content: '',
  },
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

describe('thinking that a tool call ends (Qwen3.5, Nemotron 3 Nano, DeepSeek V3.2: llama.cpp test-chat.cpp)', () => {
  const qwen35 = { start: '<think>', end: '</think>', endBefore: ['<tool_call>'] };
  const call = '<tool_call>\n<function=run_in_terminal>\n<parameter=command>\npwd\n</parameter>\n</function>\n</tool_call>';

  it('ends the reasoning at the call, which begins the content', () => {
    expect(splitReasoning(qwen35, true, `Need to inspect the current directory.\n${call}`)).toEqual({
      reasoning: 'Need to inspect the current directory.',
      content: call,
    });
    expect(splitReasoning(qwen35, true, call)).toEqual({ reasoning: '', content: call });
  });

  it('still ends it at the end tag, which is dropped, and holds a partial marker while it streams', () => {
    expect(splitReasoning(qwen35, true, `I'm\nthinking\n</think>\n\n${call}`)).toEqual({ reasoning: "I'm\nthinking", content: call });
    const split = new ReasoningSplit(qwen35, true);
    expect(split.push('plan <tool_')).toEqual([{ type: 'reasoning', text: 'plan' }]);
    expect([...split.push('call>\n<function=f>'), ...split.end()]).toEqual([{ type: 'content', text: '<tool_call>\n<function=f>' }]);
  });
});

describe('an answer in the markers its template wraps it in (Command R7B: llama.cpp test-chat.cpp)', () => {
  const r7b = { start: '<|START_THINKING|>', end: '<|END_THINKING|>', answer: { headers: ['<|START_RESPONSE|>'], end: '<|END_RESPONSE|>' } };

  it('drops the markers, with and without thinking before them, and keeps a call after them', () => {
    expect(splitReasoning(r7b, false, "<|START_RESPONSE|>Hello, world!\nWhat's up?<|END_RESPONSE|>")).toEqual({
      reasoning: '',
      content: "Hello, world!\nWhat's up?",
    });
    expect(splitReasoning(r7b, false, "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_RESPONSE|>Hello, world!\nWhat's up?<|END_RESPONSE|>")).toEqual({
      reasoning: "I'm\nthinking",
      content: "Hello, world!\nWhat's up?",
    });
    expect(splitReasoning(r7b, false, '<|START_RESPONSE|>Hi<|END_RESPONSE|><|START_ACTION|>[]<|END_ACTION|>')).toEqual({
      reasoning: '',
      content: 'Hi<|START_ACTION|>[]<|END_ACTION|>',
    });
  });

  it('holds a part of either marker while it streams', () => {
    const split = new ReasoningSplit(r7b, false);
    const events = ['<|START_', 'RESPONSE|>Hel', 'lo<|END_', 'RESPONSE|>'].flatMap((piece) => split.push(piece));
    expect([...events, ...split.end()]).toEqual([
      { type: 'content', text: 'Hel' },
      { type: 'content', text: 'lo' },
    ]);
  });
});

describe("Muse Glimmer's messages: to itself its thinking, to the user its answer (llama.cpp test-chat.cpp)", () => {
  const muse = { start: 'to=self<|message|>', end: '<|eom|>', answer: answerWrapper('<atem:function_calls><|eom|>')! };
  const call =
    '<atem:function_calls>\n<atem:invoke name="special_function">\n<atem:parameter name="arg1">1</atem:parameter>\n</atem:invoke>\n</atem:function_calls>';

  it('reads the answer alone, thinking then the answer, and the answer then a call', () => {
    expect(splitReasoning(muse, false, " to=user<|message|>Hello, world!\nWhat's up?")).toEqual({ reasoning: '', content: "Hello, world!\nWhat's up?" });
    expect(splitReasoning(muse, false, ` to=self<|message|>I could use ${call} here<|eom|><|start|>assistant to=user<|message|>Hello!`)).toEqual({
      reasoning: `I could use ${call} here`,
      content: 'Hello!',
    });
    expect(splitReasoning(muse, false, `<|message|>Hi<|eom|><|start|>assistant to=special_function<|message|>${call}`)).toEqual({
      reasoning: '',
      content: `Hi<|start|>assistant to=special_function<|message|>${call}`,
    });
  });
});
