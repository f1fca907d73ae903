/**
 * gpt-oss's harmony tool calls (pure logic): the parses llama.cpp's tests/test-chat.cpp expects (the
 * recipient in the role header or in the channel, with `<|constrain|>json`, after the analysis channel's
 * thinking), a builtin recipient dropped, plain text left as content; and the forced call's grammar.
 */
import { describe, expect, it } from 'vitest';
import { harmonyCallGrammar, parseHarmonyCalls } from '../../common/tool-calls/harmony-calls.js';

const calls = (text: string) => parseHarmonyCalls(text).calls.map((c) => [c.name, JSON.parse(c.arguments)]);

describe('harmony calls', () => {
  it('reads a call whose recipient is in the role header or in the channel', () => {
    expect(calls(' to=functions.special_function<|channel|>analysis<|message|>{"arg1": 1}')).toEqual([['special_function', { arg1: 1 }]]);
    expect(calls('<|channel|>analysis to=functions.special_function<|message|>{"arg1": 1}')).toEqual([['special_function', { arg1: 1 }]]);
    expect(calls(' to=functions.special_function<|channel|>analysis <|constrain|>json<|message|>{"arg1": 1}')).toEqual([['special_function', { arg1: 1 }]]);
    expect(calls('<|channel|>commentary to=functions.special_function<|message|>{"arg1": 1}')).toEqual([['special_function', { arg1: 1 }]]);
  });

  it('reads the call after the answer left its analysis (what core hands on after the thinking)', () => {
    const text =
      '<|start|>assistant<|channel|>commentary to=functions.edit <|constrain|>json<|message|>{"oldString": "if (part < railCount - 1) {", "newString": "if (part < 4) {", "replaceAll": false}';
    expect(calls(text)).toEqual([['edit', { oldString: 'if (part < railCount - 1) {', newString: 'if (part < 4) {', replaceAll: false }]]);
  });

  it('drops a message to a builtin recipient and leaves plain text as content', () => {
    expect(parseHarmonyCalls('<|start|>assistant to=container.exec<|channel|>commentary<|message|>python3 -c \'print("hello")\'')).toEqual({
      content: '',
      calls: [],
    });
    expect(parseHarmonyCalls("Hello, world!\nWhat's up?")).toEqual({ content: "Hello, world!\nWhat's up?", calls: [] });
  });

  it('forces a commentary message to one of the tools, each with its arguments grammar', () => {
    expect(harmonyCallGrammar([{ name: 'get_weather' }], ['root ::= "{}"']).split('\n')).toEqual([
      'root ::= harmony-call',
      'harmony-call ::= "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" a0-root',
      'a0-root ::= "{}"',
    ]);
  });
});
