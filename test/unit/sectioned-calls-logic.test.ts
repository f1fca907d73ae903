/**
 * The sectioned tool-call formats (pure logic): the parses llama.cpp's tests/test-chat.cpp expects of
 * Kimi K2, DeepSeek V3.1, Mistral Small 3.2, Ministral 3 / Devstral and Functionary v3.1, of DeepSeek R1's
 * (llama.cpp's template; the call's shape as its template writes it) and Solar Open's (its template's own
 * rendering: llama.cpp's parser of it is broken at this commit), whole and streamed, content before the
 * calls kept; and the forced call's grammar, with and without a section.
 */
import { describe, expect, it } from 'vitest';
import { SECTIONED_FORMATS, sectionedCallGrammar } from '../../common/tool-calls/sectioned-calls.js';
import { formatMarkers, parseToolCalls } from '../../common/tool-calls/tool-call-parsing.js';
import { expectParse, type ParseCase } from '../helpers/tool-call-cases.js';

const cases: ParseCase[] = [
  {
    format: 'kimi-k2',
    text: '<|tool_calls_section_begin|><|tool_call_begin|>functions.special_function:0<|tool_call_argument_begin|>{"arg1": 1}<|tool_call_end|><|tool_calls_section_end|>',
    content: '',
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    format: 'deepseek-r1',
    text: 'Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{"city": "Tokyo"}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    content: 'Let me check.',
    calls: [
      ['get_time', { city: 'Tokyo' }],
      ['get_weather', { city: 'Paris' }],
    ],
  },
  {
    format: 'deepseek-v3.1',
    text: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"city": "XYZCITY"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    content: '',
    calls: [['get_time', { city: 'XYZCITY' }]],
  },
  {
    format: 'solar-open',
    text: 'Sure.<|tool_calls|><|tool_call:begin|>call_1<|tool_call:name|>special_function<|tool_call:args|>{"arg1": 1}<|tool_call:end|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>python<|tool_call:args|>{"code": "print(\'hi\')"}<|tool_call:end|><|calls|>',
    content: 'Sure.',
    calls: [
      ['special_function', { arg1: 1 }],
      ['python', { code: "print('hi')" }],
    ],
  },
  { format: 'mistral-args', text: '[TOOL_CALLS]special_function[ARGS]{"arg1":1}', content: '', calls: [['special_function', { arg1: 1 }]] },
  {
    format: 'mistral-args',
    text: '[TOOL_CALLS]special_function[ARGS]{"arg1": 1}[TOOL_CALLS]special_function_with_opt[ARGS]{"arg1": 1, "arg2": 2}',
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['special_function_with_opt', { arg1: 1, arg2: 2 }],
    ],
  },
  {
    format: 'mistral-args',
    text: 'Hello, world!\nWhat\'s up?[TOOL_CALLS]special_function[ARGS]{"arg1": 1}',
    content: "Hello, world!\nWhat's up?",
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    format: 'mistral-call-id',
    text: '[TOOL_CALLS]special_function[CALL_ID]000000001[ARGS]{"arg1": 1}[TOOL_CALLS]special_function_with_opt[CALL_ID]000000002[ARGS]{"arg1": 1, "arg2": 2}',
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['special_function_with_opt', { arg1: 1, arg2: 2 }],
    ],
  },
  { format: 'functionary-v3.1', text: '<function=special_function>{"arg1": 1}</function>', content: '', calls: [['special_function', { arg1: 1 }]] },
  { format: 'functionary-v3.2', text: 'special_function\n{"arg1": 1}', content: '', calls: [['special_function', { arg1: 1 }]] },
  {
    format: 'functionary-v3.2',
    text: 'all\nHello, world!>>>special_function\n{"arg1": 1}>>>python\n{"code": "print(1)"}',
    content: 'Hello, world!',
    calls: [
      ['special_function', { arg1: 1 }],
      ['python', { code: 'print(1)' }],
    ],
  },
];

describe('calls in a section', () => {
  for (const c of cases) {
    it(`${c.format}: ${JSON.stringify(c.text.slice(0, 50))}`, () => expectParse(c));
  }

  it("reads Functionary v3.2's answer text after its `all` header, and forces its first call without the `>>>` the prompt wrote", () => {
    expect(parseToolCalls('functionary-v3.2', "all\nHello, world!\nWhat's up?")).toEqual({ content: "Hello, world!\nWhat's up?", calls: [] });
    expect(
      sectionedCallGrammar(SECTIONED_FORMATS['functionary-v3.2'], [{ name: 'f' }], ['root ::= "{}"'], true)
        .split('\n')
        .slice(0, 3),
    ).toEqual(['root ::= bare-call sectioned-call*', 'bare-call ::= "f" "\\n" a0-root', 'sectioned-call ::= ">>>" "f" "\\n" a0-root']);
  });

  it('leaves text with no section as content', () => {
    expect(parseToolCalls('kimi-k2', "Hello, world!\nWhat's up?")).toEqual({ content: "Hello, world!\nWhat's up?", calls: [] });
  });

  it('names the markers engines must write out', () => {
    expect(formatMarkers('kimi-k2')).toEqual(
      expect.arrayContaining([
        '<|tool_calls_section_begin|>',
        '<|tool_calls_section_end|>',
        '<|tool_call_begin|>',
        '<|tool_call_end|>',
        '<|tool_call_argument_begin|>',
      ]),
    );
    expect(formatMarkers('deepseek-r1')).toContain('<｜tool▁sep｜>');
  });

  it("forces a call with no section and a made-up id in the family's markers", () => {
    expect(
      sectionedCallGrammar(SECTIONED_FORMATS['mistral-call-id'], [{ name: 'get_weather' }], ['root ::= "{}"'], true)
        .split('\n')
        .slice(0, 2),
    ).toEqual(['root ::= sectioned-call sectioned-call*', 'sectioned-call ::= "[TOOL_CALLS]" "get_weather" "[CALL_ID]" [a-zA-Z0-9]{9} "[ARGS]" a0-root']);
    expect(sectionedCallGrammar(SECTIONED_FORMATS['functionary-v3.1'], [{ name: 'f' }], ['root ::= "{}"'], false).split('\n')[1]).toBe(
      'sectioned-call ::= "<function=" "f" ">" a0-root "</function>"',
    );
  });

  it("forces calls in the family's markers, each tool's arguments by its own grammar", () => {
    expect(sectionedCallGrammar(SECTIONED_FORMATS['kimi-k2'], [{ name: 'get_weather' }], ['root ::= "{}"'], false).split('\n')).toEqual([
      'root ::= "<|tool_calls_section_begin|>" sectioned-call "<|tool_calls_section_end|>"',
      'sectioned-call ::= "<|tool_call_begin|>" "functions." "get_weather" ":" [0-9] "<|tool_call_argument_begin|>" a0-root "<|tool_call_end|>"',
      'a0-root ::= "{}"',
    ]);
    expect(sectionedCallGrammar(SECTIONED_FORMATS['deepseek-r1'], [{ name: 'get_time' }], ['root ::= "{}"'], true).split('\n')[1]).toBe(
      'sectioned-call ::= "<｜tool▁call▁begin｜>" "function<｜tool▁sep｜>" "get_time" "\\n```json\\n" a0-root "\\n```" "<｜tool▁call▁end｜>"',
    );
  });
});
