/**
 * Calls written as expressions (pure logic): the parses llama.cpp's tests/test-chat.cpp expects of Gemma 4
 * (its dict syntax with `<|"|>` strings) and of LFM2 / LFM2.5 (Python keyword arguments), whole and
 * streamed a character at a time; what does not read stays content; and the forced call's grammar.
 */
import { describe, expect, it } from 'vitest';
import { EXPRESSION_FORMATS, expressionCallGrammar } from '../../common/tool-calls/expression-calls.js';
import { formatMarkers, parseToolCalls } from '../../common/tool-calls/tool-call-parsing.js';
import { expectParse, type ParseCase } from '../helpers/tool-call-cases.js';

const cases: ParseCase[] = [
  { format: 'gemma4', text: '<|tool_call>call:get_time{city:<|"|>London<|"|>}<tool_call|>', content: '', calls: [['get_time', { city: 'London' }]] },
  {
    format: 'gemma4',
    text: 'Hello, world!\nWhat\'s up?<|tool_call>call:get_time{city:<|"|>Paris<|"|>}<tool_call|>',
    content: "Hello, world!\nWhat's up?",
    calls: [['get_time', { city: 'Paris' }]],
  },
  {
    format: 'gemma4',
    text: '<|tool_call>call:get_time{city:<|"|>London<|"|>}<tool_call|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    content: '',
    calls: [
      ['get_time', { city: 'London' }],
      ['get_weather', { city: 'Paris' }],
    ],
  },
  {
    format: 'gemma4',
    text: '<|tool_call>call:todo_list{todos:[<|"|>buy milk<|"|>,<|"|>walk dog<|"|>]}<tool_call|>',
    content: '',
    calls: [['todo_list', { todos: ['buy milk', 'walk dog'] }]],
  },
  { format: 'gemma4', text: '<|tool_call>call:special_function{arg1:-7}<tool_call|>', content: '', calls: [['special_function', { arg1: -7 }]] },
  { format: 'gemma4', text: '<|tool_call>call:amount{orig:1.5e10}<tool_call|>', content: '', calls: [['amount', { orig: 1.5e10 }]] },
  { format: 'gemma4', text: '<|tool_call>call:empty_args{}<tool_call|>', content: '', calls: [['empty_args', {}]] },
  {
    format: 'gemma4',
    text: '<|tool_call>call:set_config{config:{theme:<|"|>dark<|"|>,count:3}}<tool_call|>',
    content: '',
    calls: [['set_config', { config: { theme: 'dark', count: 3 } }]],
  },
  { format: 'lfm2', text: '<|tool_call_start|>[special_function(arg1=1)]<|tool_call_end|>', content: '', calls: [['special_function', { arg1: 1 }]] },
  { format: 'lfm2', text: '<|tool_call_start|>[get_time(city="XYZCITY")]<|tool_call_end|>', content: '', calls: [['get_time', { city: 'XYZCITY' }]] },
  { format: 'lfm2', text: '<|tool_call_start|>[toggle(enabled=True)]<|tool_call_end|>', content: '', calls: [['toggle', { enabled: true }]] },
  { format: 'lfm2', text: '<|tool_call_start|>[set_nullable(value=None)]<|tool_call_end|>', content: '', calls: [['set_nullable', { value: null }]] },
  {
    format: 'lfm2',
    text: '<|tool_call_start|>[Calendar.create_event(title="demo", participants=["Alice", "Bob"], metadata={"priority": "high", "reminder": true})]<|tool_call_end|>',
    content: '',
    calls: [['Calendar.create_event', { title: 'demo', participants: ['Alice', 'Bob'], metadata: { priority: 'high', reminder: true } }]],
  },
  {
    format: 'lfm2',
    text: '<|tool_call_start|>[python(code="First line\\nSecond line\\tindented")]<|tool_call_end|>',
    content: '',
    calls: [['python', { code: 'First line\nSecond line\tindented' }]],
  },
  {
    format: 'lfm2',
    text: 'Let me check the time.<|tool_call_start|>[get_time(city="Paris")]<|tool_call_end|>',
    content: 'Let me check the time.',
    calls: [['get_time', { city: 'Paris' }]],
  },
  {
    format: 'lfm2',
    text: '<|tool_call_start|>[special_function(arg1=1), special_function_with_opt(arg1=1, arg2=2)]<|tool_call_end|>',
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['special_function_with_opt', { arg1: 1, arg2: 2 }],
    ],
  },
];

describe('calls written as expressions', () => {
  for (const c of cases) {
    it(`${c.format}: ${JSON.stringify(c.text.slice(0, 60))}`, () => expectParse(c));
  }

  it('leaves a call that does not read, or text with no marker, as content', () => {
    expect(parseToolCalls('gemma4', '<|tool_call>call:get_time{city:<|"|>London}<tool_call|>').calls).toEqual([]);
    expect(parseToolCalls('lfm2', '<|tool_call_start|>[get_time(city=Paris)]<|tool_call_end|>').calls).toEqual([]);
    expect(parseToolCalls('lfm2', 'Hello').content).toBe('Hello');
    expect(formatMarkers('gemma4')).toEqual(expect.arrayContaining(['<|tool_call>', '<tool_call|>', '<|"|>']));
  });

  it("forces a call in the family's syntax: strings as text in its quotes, other values by their JSON-schema grammar", () => {
    const tool = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } };
    const gemma = expressionCallGrammar(EXPRESSION_FORMATS.gemma4, [tool], [[null, 'root ::= [0-9]+']], true).split('\n');
    expect(gemma.slice(0, 3)).toEqual([
      'root ::= "<|tool_call>call:" expression-call "<tool_call|>" ("<|tool_call>call:" expression-call "<tool_call|>")*',
      'expression-call ::= "get_weather" "{" "city" ":" expression-text "," "days" ":" v0-1-root "}"',
      'expression-text ::= "<|\\"|>" [^<\\\\]* "<|\\"|>"',
    ]);
    const lfm2 = expressionCallGrammar(EXPRESSION_FORMATS.lfm2, [tool], [[null, 'root ::= [0-9]+']], false).split('\n');
    expect(lfm2.slice(0, 3)).toEqual([
      'root ::= "<|tool_call_start|>[" expression-call "]<|tool_call_end|>"',
      'expression-call ::= "get_weather" "(" "city" "=" expression-text ", " "days" "=" v0-1-root ")"',
      'expression-text ::= "\\"" [^"\\\\]* "\\""',
    ]);
  });
});
