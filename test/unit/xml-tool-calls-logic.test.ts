/**
 * The XML-like tool calls (pure logic): the parses llama.cpp's tests/test-chat.cpp expects of its
 * Qwen3-Coder template (a call, one without its `<tool_call>`, content before it, parallel calls, multiline
 * and unicode string values, HTML in a string, a JSON array value, arguments in any order) and of Seed-OSS,
 * GLM 4.6 / 4.7, MiniMax M2 and M3, DeepSeek V3.2 / V4 (DSML), Kimi K3, MiniCPM5 and Hy3 (its template's
 * own rendering), whole and streamed a character at a time; and the forced call's grammar.
 */
import { describe, expect, it } from 'vitest';
import { parseToolCalls } from '../../common/tool-calls/tool-call-parsing.js';
import { expectParse } from '../helpers/tool-call-cases.js';
import type { ToolFunction } from '../../common/tool-calls/tool-call-types.js';
import { prefixRules } from '../../common/tool-calls/tool-call-grammar.js';
import { XML_FORMATS, xmlToolCallGrammar } from '../../common/tool-calls/xml-tool-calls.js';
import type { ToolCallFormat } from '../../common/tool-calls/tool-call-format.js';

const object = (properties: Record<string, unknown>, required: string[] = Object.keys(properties)) => ({ type: 'object', properties, required });
const tools: ToolFunction[] = [
  { name: 'special_function', parameters: object({ arg1: { type: 'integer' } }) },
  { name: 'special_function_with_opt', parameters: object({ arg1: { type: 'integer' }, arg2: { type: 'integer' } }, ['arg1']) },
  { name: 'python', parameters: object({ code: { type: 'string' } }) },
  { name: 'html', parameters: object({ markup: { type: 'string' } }) },
  { name: 'todo_list', parameters: object({ todos: { type: 'array', items: { type: 'object' } } }) },
  { name: 'magic_int', parameters: object({ ref: { type: 'integer' }, name: { type: 'string' } }) },
  { name: 'empty_args', parameters: object({}) },
  { name: 'edit', parameters: object({ filename: { type: 'string' }, oldString: { type: 'string' }, newString: { type: 'string' } }) },
];

const call = (name: string, params: [string, string][]): string =>
  `<function=${name}>\n${params.map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`).join('')}</function>\n`;

const cases: { name: string; format?: ToolCallFormat; text: string; content: string; calls: [string, unknown][] }[] = [
  { name: 'a call', text: `<tool_call>\n${call('special_function', [['arg1', '1']])}</tool_call>`, content: '', calls: [['special_function', { arg1: 1 }]] },
  {
    name: 'a first call without its <tool_call>',
    text: `${call('special_function', [['arg1', '1']])}</tool_call>`,
    content: '',
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    name: 'content before the call',
    text: `Let me call it.\n${call('special_function', [['arg1', '1']])}</tool_call>`,
    content: 'Let me call it.',
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    name: 'parallel calls',
    text: `<tool_call>\n${call('special_function', [['arg1', '1']])}</tool_call>\n<tool_call>\n${call('special_function_with_opt', [
      ['arg1', '1'],
      ['arg2', '2'],
    ])}</tool_call>`,
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['special_function_with_opt', { arg1: 1, arg2: 2 }],
    ],
  },
  {
    name: 'a multiline string',
    text: `<tool_call>\n${call('python', [['code', 'def hello():\n    print("Hello, world!")\n\nhello()']])}</tool_call>`,
    content: '',
    calls: [['python', { code: 'def hello():\n    print("Hello, world!")\n\nhello()' }]],
  },
  { name: 'a unicode string', text: `<tool_call>\n${call('python', [['code', '格']])}</tool_call>`, content: '', calls: [['python', { code: '格' }]] },
  {
    name: 'HTML in a string',
    text: `<tool_call>\n${call('html', [['markup', '<html>\n <head>\n  <title>Hello!</title>\n </head>\n</html>']])}</tool_call>`,
    content: '',
    calls: [['html', { markup: '<html>\n <head>\n  <title>Hello!</title>\n </head>\n</html>' }]],
  },
  {
    name: 'a JSON array value',
    text: `<tool_call>\n${call('todo_list', [['todos', '[{"item": "Check stuff", "selected": false}, {"item": "Prepare stuff", "selected": true}]']])}</tool_call>`,
    content: '',
    calls: [
      [
        'todo_list',
        {
          todos: [
            { item: 'Check stuff', selected: false },
            { item: 'Prepare stuff', selected: true },
          ],
        },
      ],
    ],
  },
  {
    name: 'arguments in any order',
    text: `<tool_call>\n${call('edit', [
      ['newString', '#include'],
      ['filename', 'foo.c'],
      ['oldString', '#iclunde'],
    ])}</tool_call>`,
    content: '',
    calls: [['edit', { newString: '#include', filename: 'foo.c', oldString: '#iclunde' }]],
  },
  {
    name: 'Seed-OSS, parallel',
    format: 'seed-oss',
    text: '<seed:tool_call>\n<function=special_function>\n<parameter=arg1>1</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=special_function_with_opt>\n<parameter=arg1>1</parameter>\n<parameter=arg2>2</parameter>\n</function>\n</seed:tool_call>',
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['special_function_with_opt', { arg1: 1, arg2: 2 }],
    ],
  },
  {
    name: 'GLM 4.6',
    format: 'glm',
    text: '<tool_call>special_function\n<arg_key>arg1</arg_key>\n<arg_value>1</arg_value>\n</tool_call>',
    content: '',
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    name: 'GLM 4.7, no newlines',
    format: 'glm',
    text: '<tool_call>special_function<arg_key>arg1</arg_key><arg_value>1</arg_value></tool_call>',
    content: '',
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    name: 'MiniMax M2',
    format: 'minimax-m2',
    text: '<minimax:tool_call>\n<invoke name="special_function">\n<parameter name="arg1">1</parameter>\n</invoke>\n</minimax:tool_call>',
    content: '',
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    name: 'MiniMax M2, two calls in one block',
    format: 'minimax-m2',
    text: '<minimax:tool_call>\n<invoke name="special_function">\n<parameter name="arg1">1</parameter>\n</invoke>\n<invoke name="python">\n<parameter name="code">print(1)</parameter>\n</invoke>\n</minimax:tool_call>',
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['python', { code: 'print(1)' }],
    ],
  },
  {
    name: 'DeepSeek V3.2 DSML, content before, typed values',
    format: 'dsml-v3.2',
    text: 'Let me call the function.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="todo_list">\n<｜DSML｜parameter name="todos" string="false">["buy milk","walk dog"]</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name="magic_int">\n<｜DSML｜parameter name="ref" string="false">42</｜DSML｜parameter>\n<｜DSML｜parameter name="name" string="true">foo bar</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    content: 'Let me call the function.',
    calls: [
      ['todo_list', { todos: ['buy milk', 'walk dog'] }],
      ['magic_int', { ref: 42, name: 'foo bar' }],
    ],
  },
  {
    name: 'DeepSeek V4 DSML',
    format: 'dsml-v4',
    text: '\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="special_function">\n<｜DSML｜parameter name="arg1" string="false">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
    content: '',
    calls: [['special_function', { arg1: 1 }]],
  },
  {
    name: 'Hy3, two calls',
    format: 'hy3',
    text: 'Sure.<tool_calls:opensource>\n<tool_call:opensource>special_function<tool_sep:opensource>\n<arg_key:opensource>arg1</arg_key:opensource>\n<arg_value:opensource>1</arg_value:opensource>\n</tool_call:opensource>\n<tool_call:opensource>python<tool_sep:opensource>\n<arg_key:opensource>code</arg_key:opensource>\n<arg_value:opensource>print(1)</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>',
    content: 'Sure.',
    calls: [
      ['special_function', { arg1: 1 }],
      ['python', { code: 'print(1)' }],
    ],
  },
  {
    name: 'MiniMax M3, two calls',
    format: 'minimax-m3',
    text: ']<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="special_function">]<]minimax[>[<arg1>1]<]minimax[>[</arg1>]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name="python">]<]minimax[>[<code>print(1)]<]minimax[>[</code>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>',
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['python', { code: 'print(1)' }],
    ],
  },
  {
    name: 'Kimi K3, two calls',
    format: 'kimi-k3',
    text: '<|open|>tools<|sep|><|open|>call tool="special_function" index="1"<|sep|><|open|>argument key="arg1" type="number"<|sep|>1<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool="special_function_with_opt" index="2"<|sep|><|open|>argument key="arg1" type="number"<|sep|>1<|close|>argument<|sep|><|open|>argument key="arg2" type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
    content: '',
    calls: [
      ['special_function', { arg1: 1 }],
      ['special_function_with_opt', { arg1: 1, arg2: 2 }],
    ],
  },
  {
    name: 'MiniCPM5',
    format: 'minicpm5',
    text: '<function name="python"><param name="code">print(\'Hello, World!\')</param></function>',
    content: '',
    calls: [['python', { code: "print('Hello, World!')" }]],
  },
  {
    name: 'MiniCPM5, CDATA',
    format: 'minicpm5',
    text: '<function name="html"><param name="markup"><![CDATA[<a href="/x">hi</a> </param>]]></param></function>',
    content: '',
    calls: [['html', { markup: '<a href="/x">hi</a> </param>' }]],
  },
  {
    name: 'MiniCPM5, parallel',
    format: 'minicpm5',
    text: '<function name="python"><param name="code">print(\'x\')</param></function>\n<function name="python"><param name="code">print(\'y\')</param></function>',
    content: '',
    calls: [
      ['python', { code: "print('x')" }],
      ['python', { code: "print('y')" }],
    ],
  },
  {
    name: 'Muse Glimmer, content then two calls',
    format: 'muse-glimmer',
    text: 'Hello, world!<|eom|><|start|>assistant to=special_function<|message|><atem:function_calls>\n<atem:invoke name="special_function">\n<atem:parameter name="arg1">1</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant to=python<|message|><atem:function_calls>\n<atem:invoke name="python">\n<atem:parameter name="code">print(1)</atem:parameter>\n</atem:invoke>\n</atem:function_calls>',
    content: 'Hello, world!<|eom|>',
    calls: [
      ['special_function', { arg1: 1 }],
      ['python', { code: 'print(1)' }],
    ],
  },
  {
    name: 'Muse Glimmer, a call right after the generation prompt',
    format: 'muse-glimmer',
    text: ' to=special_function<|message|><atem:function_calls>\n<atem:invoke name="special_function">\n<atem:parameter name="arg1">1</atem:parameter>\n</atem:invoke>\n</atem:function_calls>',
    content: '',
    calls: [['special_function', { arg1: 1 }]],
  },
  { name: 'MiniCPM5, no arguments', format: 'minicpm5', text: '<function name="empty_args"></function>', content: '', calls: [['empty_args', {}]] },
];

describe('Qwen3-Coder XML calls', () => {
  for (const c of cases) {
    it(c.name, () => expectParse({ ...c, format: c.format ?? 'qwen3-xml' }, tools));
  }

  it('leaves text with no call as content', () => {
    expect(parseToolCalls('qwen3-xml', "Hello, world!\nWhat's up?", tools)).toEqual({ content: "Hello, world!\nWhat's up?", calls: [] });
  });
});

describe('the forced XML call grammar', () => {
  it("renames a JSON grammar's rules apart, leaving literals and classes alone", () => {
    expect(prefixRules('root ::= value "root" [a-z]\nvalue ::= "x" | root', 'p-')).toBe('p-root ::= p-value "root" [a-z]\np-value ::= "x" | p-root');
  });

  it("writes each parameter in the format: text for a string, the value's grammar otherwise, one of an enum's values", () => {
    const grammar = xmlToolCallGrammar(
      XML_FORMATS['qwen3-xml'],
      [{ name: 'get_weather', parameters: object({ city: { type: 'string', enum: ['Paris', 'Rome'] }, days: { type: 'integer' }, note: { type: 'string' } }) }],
      [[null, 'root ::= [0-9]+', null]],
      false,
    );
    expect(grammar.split('\n')).toEqual([
      'root ::= xml-call',
      'xml-call ::= "<tool_call>\\n" xml-function "</tool_call>"',
      'xml-function ::= ("<function=" "get_weather" ">\\n" "<parameter=" "city" ">\\n" ("Paris" | "Rome") "\\n</parameter>\\n" "<parameter=" "days" ">\\n" (v0-1-root) "\\n</parameter>\\n" "<parameter=" "note" ">\\n" (xml-text) "\\n</parameter>\\n" "</function>\\n")',
      'xml-text ::= [^<]+',
      'v0-1-root ::= [0-9]+',
    ]);
  });

  it("writes GLM's keys and values with no function wrapper", () => {
    const grammar = xmlToolCallGrammar(XML_FORMATS.glm, [{ name: 'f', parameters: object({ a: { type: 'string' } }) }], [[null]], false);
    expect(grammar.split('\n').slice(1, 3)).toEqual([
      'xml-call ::= "<tool_call>" xml-function "</tool_call>"',
      'xml-function ::= ("f" "\\n" "<arg_key>" "a" "</arg_key>\\n<arg_value>" (xml-text) "</arg_value>\\n")',
    ]);
  });

  it('writes the calls of a shared block in it, and fills in the attributes a format writes (DSML, Kimi K3)', () => {
    const dsml = xmlToolCallGrammar(
      XML_FORMATS['dsml-v3.2'],
      [{ name: 'f', parameters: object({ a: { type: 'string' }, n: { type: 'integer' } }) }],
      [[null, 'root ::= [0-9]+']],
      true,
    ).split('\n');
    expect(dsml[0]).toBe('root ::= "<｜DSML｜function_calls>\\n" xml-function ("\\n" xml-function)* "</｜DSML｜function_calls>"');
    expect(dsml[1]).toContain('"<｜DSML｜parameter name=\\"" "a" "\\" string=\\"" "true" "\\">" (xml-text)');
    expect(dsml[1]).toContain('"<｜DSML｜parameter name=\\"" "n" "\\" string=\\"" "false" "\\">" (v0-1-root)');
    const kimi = xmlToolCallGrammar(
      XML_FORMATS['kimi-k3'],
      [{ name: 'f', parameters: object({ n: { type: 'integer' } }) }],
      [['root ::= [0-9]+']],
      false,
    ).split('\n');
    expect(kimi[1]).toBe(
      'xml-function ::= ("<|open|>call tool=\\"" "f" "\\" index=\\"" [1-9] "\\"<|sep|>" "<|open|>argument key=\\"" "n" "\\" type=\\"" "number" "\\"<|sep|>" (v0-0-root) "<|close|>argument<|sep|>" "<|close|>call<|sep|>")',
    );
  });
});
