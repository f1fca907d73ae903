/**
 * The tool-call formats that are JSON between markers (pure logic): the parses llama.cpp's
 * tests/test-chat.cpp expects of Command R7B, Command R+, Nemotron Nano v2, Apriel, FireFunction v2, Apertus,
 * GigaChat 3 and 3.1, and MiniMax M1's as its template writes them, whole and streamed;
 * what is not a whole array stays content; and the forced call's grammar in the family's markers.
 */
import { describe, expect, it } from 'vitest';
import { markedJsonCallSchema, markedJsonGrammar, MARKED_JSON_FORMATS } from '../../common/tool-calls/marked-json-calls.js';
import { formatMarkers, parseToolCalls } from '../../common/tool-calls/tool-call-parsing.js';
import { expectParse, type ParseCase } from '../helpers/tool-call-cases.js';

const cases: Omit<ParseCase, 'calls'>[] = [
  {
    format: 'command-r7b',
    text: '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "special_function", "parameters": {"arg1": 1}}\n]<|END_ACTION|>',
    content: '',
  },
  { format: 'nemotron-v2', text: '<TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}]</TOOLCALL>\n', content: '' },
  { format: 'nemotron-v2', text: 'Let me look.\n<TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}]</TOOLCALL>', content: 'Let me look.' },
  {
    format: 'command-r7b',
    text: '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "special_function", "parameters": {"arg1": 1}}\n]<|END_ACTION|>',
    content: '',
  },
  { format: 'command-r-plus', text: 'Action:\n```json\n[{"tool_name": "special_function", "parameters": {"arg1": 1}}]\n```', content: '' },
  { format: 'apriel', text: '<tool_calls>[{"name": "special_function", "arguments": {"arg1": 1}}]</tool_calls>', content: '' },
  { format: 'firefunction-v2', text: ' functools[{"name": "special_function", "arguments": {"arg1": 1}}]', content: '' },
  { format: 'apertus', text: '<|tools_prefix|>[{"special_function": {"arg1": 1}}]<|tools_suffix|>', content: '' },
  { format: 'minimax-m1', text: '<tool_calls>\n{"name": "special_function", "arguments": {"arg1": 1}}\n</tool_calls>', content: '' },
  { format: 'gigachat3', text: '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "special_function", "arguments": {"arg1": 1}}', content: '' },
  {
    format: 'gigachat3',
    text: 'Hello, world!\nWhat\'s up?<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "special_function", "arguments": {"arg1": 1}}',
    content: "Hello, world!\nWhat's up?",
  },
  {
    format: 'gigachat3.1',
    text: 'Hello, world!\nWhat\'s up?<|function_call|>{"name": "special_function", "arguments": {"arg1": 1}}',
    content: "Hello, world!\nWhat's up?",
  },
];

describe('calls as a JSON array between markers', () => {
  for (const c of cases) {
    it(`${c.format}: ${JSON.stringify(c.text.slice(0, 40))}`, () => expectParse({ ...c, calls: [['special_function', { arg1: 1 }]] }));
  }

  it("reads MiniMax M1's two calls one per line, as its template writes them", () => {
    const text = '<tool_calls>\n{"name": "special_function", "arguments": {"arg1": 1}}\n{"name": "python", "arguments": {"code": "print(1)"}}\n</tool_calls>';
    expect(parseToolCalls('minimax-m1', text).calls.map((call) => call.name)).toEqual(['special_function', 'python']);
    expect(markedJsonGrammar(MARKED_JSON_FORMATS['minimax-m1'], 'root ::= "{}"', true).split('\n')[0]).toBe(
      'root ::= "<tool_calls>\\n" tool-call ("\\n" tool-call)* "\\n</tool_calls>"',
    );
    expect(markedJsonGrammar(MARKED_JSON_FORMATS['gigachat3.1'], 'root ::= "{}"', true).split('\n')[0]).toBe('root ::= "<|function_call|>" tool-call');
  });

  it("forces Apertus's call with the function's name as its key", () => {
    expect(markedJsonCallSchema(MARKED_JSON_FORMATS.apertus, 'get_weather', { type: 'object' })).toEqual({
      type: 'object',
      properties: { get_weather: { type: 'object' } },
      required: ['get_weather'],
    });
  });

  it('leaves an array that does not parse, or text with no marker, as content', () => {
    expect(parseToolCalls('nemotron-v2', '<TOOLCALL>[{"name": "special_function", ')).toEqual({
      content: '<TOOLCALL>[{"name": "special_function", ',
      calls: [],
    });
    expect(parseToolCalls('command-r7b', "Hello, world!\nWhat's up?")).toEqual({ content: "Hello, world!\nWhat's up?", calls: [] });
  });

  it('names the markers engines must write out', () => {
    expect(formatMarkers('command-r7b')).toEqual(['<|START_ACTION|>', '<|END_ACTION|>']);
    expect(formatMarkers('llama3')).toEqual(['<|python_tag|>']);
  });

  it("forces a call in the family's keys and markers", () => {
    const r7b = MARKED_JSON_FORMATS['command-r7b'];
    expect(markedJsonCallSchema(r7b, 'get_weather', { type: 'object' })).toEqual({
      type: 'object',
      properties: {
        tool_call_id: { enum: ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'] },
        tool_name: { const: 'get_weather' },
        parameters: { type: 'object' },
      },
    });
    expect(markedJsonGrammar(r7b, 'root ::= "{}"\nws ::= " "?', true)).toBe(
      'root ::= "<|START_ACTION|>" "[" tool-call (", " tool-call)* "]" "<|END_ACTION|>"\ntool-call ::= "{}"\nws ::= " "?',
    );
    expect(markedJsonGrammar(MARKED_JSON_FORMATS['nemotron-v2'], 'root ::= "{}"', false)).toBe(
      'root ::= "<TOOLCALL>" "[" tool-call "]" "</TOOLCALL>"\ntool-call ::= "{}"',
    );
  });
});
