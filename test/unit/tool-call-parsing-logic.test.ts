/**
 * Tool calls read from model output, pure: Hermes / Qwen `<tool_call>` blocks, Llama 3.x JSON (bare or
 * after `<|python_tag|>`), Mistral `[TOOL_CALLS]` (array and `name[ARGS]` forms); malformed calls stay
 * content; the streaming parser gives the same calls and content as the whole-text one, holding back a
 * marker split across deltas; the format told from a template; the forced-call grammar's wrapping.
 */
import { describe, expect, it } from 'vitest';
import { toolSupportOf } from '../../common/tool-calls/tool-call-format.js';
import { toolCallSchema, wrapToolCallGrammar } from '../../common/tool-calls/tool-call-grammar.js';
import { parseToolCalls, ToolCallStream, type ToolCallEvent } from '../../common/tool-calls/tool-call-parsing.js';

const weather = { name: 'get_weather', arguments: '{"city":"Paris"}' };

describe('parseToolCalls', () => {
  it('reads Hermes / Qwen calls, several of them, with the text around them', () => {
    expect(parseToolCalls('hermes', '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')).toEqual({
      content: '',
      calls: [weather],
    });
    const two = parseToolCalls(
      'hermes',
      'Let me check.\n<tool_call>{"name":"a","arguments":{}}</tool_call>\n<tool_call>{"name":"b","parameters":{"x":1}}</tool_call>',
    );
    expect(two).toEqual({
      content: 'Let me check.',
      calls: [
        { name: 'a', arguments: '{}' },
        { name: 'b', arguments: '{"x":1}' },
      ],
    });
    // An unclosed last call (the answer hit its end marker early) still counts when its JSON is whole.
    expect(parseToolCalls('hermes', '<tool_call>{"name":"a","arguments":{}}').calls).toEqual([{ name: 'a', arguments: '{}' }]);
    // Arguments already given as a JSON string stay that string.
    expect(parseToolCalls('hermes', '<tool_call>{"name":"a","arguments":"{\\"k\\":2}"}</tool_call>').calls[0]!.arguments).toBe('{"k":2}');
  });

  it('leaves malformed calls and plain text as content', () => {
    for (const text of [
      'just text',
      '<tool_call>{"name": "a", "arguments": {</tool_call>',
      '<tool_call>{"arguments": {}}</tool_call>',
      '<tool_call>[1, 2]</tool_call>',
    ]) {
      expect(parseToolCalls('hermes', text), text).toEqual({ content: text, calls: [] });
    }
    expect(parseToolCalls('llama3', '{"not": "a call"}').calls).toEqual([]);
    expect(parseToolCalls('mistral', '[1, 2, 3]').calls).toEqual([]);
  });

  it('reads Llama 3.x calls: bare JSON, after <|python_tag|>, and ;-separated', () => {
    expect(parseToolCalls('llama3', ' {"name": "get_weather", "parameters": {"city": "Paris"}}')).toEqual({ content: '', calls: [weather] });
    expect(parseToolCalls('llama3', '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}').calls).toEqual([weather]);
    expect(parseToolCalls('llama3', '{"name": "a", "parameters": {}}; {"name": "b", "parameters": {}}').calls.map((c) => c.name)).toEqual(['a', 'b']);
    expect(parseToolCalls('llama3', 'The weather is {"name": "x"}').calls).toEqual([]);
  });

  it('reads Mistral calls: [TOOL_CALLS] with an array, the name[ARGS] form, and a bare array', () => {
    expect(parseToolCalls('mistral', '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]')).toEqual({ content: '', calls: [weather] });
    expect(parseToolCalls('mistral', '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]b[ARGS]{}').calls).toEqual([
      weather,
      { name: 'b', arguments: '{}' },
    ]);
    expect(parseToolCalls('mistral', ' [{"name": "get_weather", "arguments": {"city": "Paris"}}]').calls).toEqual([weather]);
  });
});

/** The stream's events for `text` cut into pieces of `size` characters. */
function streamed(format: Parameters<typeof parseToolCalls>[0], text: string, size: number, maxCalls?: number): ToolCallEvent[] {
  const stream = new ToolCallStream(format, maxCalls);
  const events: ToolCallEvent[] = [];
  for (let i = 0; i < text.length; i += size) events.push(...stream.push(text.slice(i, i + size)));
  return [...events, ...stream.end()];
}

const contentOf = (events: ToolCallEvent[]): string => events.flatMap((e) => (e.type === 'content' ? [e.text] : [])).join('');
const callsOf = (events: ToolCallEvent[]) => events.flatMap((e) => (e.type === 'call' ? [e.call] : []));

describe('ToolCallStream', () => {
  it('gives the whole-text calls and content for every split, never a piece of a marker as content', () => {
    const cases: [Parameters<typeof parseToolCalls>[0], string][] = [
      ['hermes', 'Sure.\n<tool_call>\n{"name": "a", "arguments": {"x": 1}}\n</tool_call>\n<tool_call>{"name":"b","arguments":{}}</tool_call>'],
      ['hermes', 'no calls here, only < and <tool'],
      ['llama3', '<|python_tag|>{"name": "a", "parameters": {"x": 1}}'],
      ['llama3', '  {"name": "a", "parameters": {}}'],
      ['mistral', '[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}}]'],
      ['mistral', 'plain [answer]'],
    ];
    for (const [format, text] of cases) {
      const whole = parseToolCalls(format, text);
      for (const size of [1, 2, 3, 7, 1000]) {
        const events = streamed(format, text, size);
        expect(callsOf(events), `${format} ${size} ${text}`).toEqual(whole.calls);
        expect(contentOf(events).trim(), `${format} ${size} ${text}`).toBe(whole.content.trim());
        if (whole.calls.length > 0) expect(contentOf(events)).not.toMatch(/<tool|\[TOOL|python_tag/);
      }
    }
  });

  it('sends a Hermes call as soon as it closes, and content before the call at once', () => {
    const stream = new ToolCallStream('hermes');
    expect(stream.push('Hi <tool')).toEqual([{ type: 'content', text: 'Hi ' }]);
    expect(stream.push('_call>{"name":"a","arguments":{}}')).toEqual([]);
    expect(stream.push('</tool_call>')).toEqual([{ type: 'call', call: { name: 'a', arguments: '{}' } }]);
    expect(stream.end()).toEqual([]);
  });

  it('keeps at most maxCalls calls (parallel_tool_calls false)', () => {
    const text = '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"b","arguments":{}}</tool_call>';
    expect(callsOf(streamed('hermes', text, 5, 1)).map((c) => c.name)).toEqual(['a']);
  });
});

describe('the format of a template', () => {
  it('tells Hermes, Llama 3 and Mistral templates apart, and falls back to Hermes in a system prompt', () => {
    const both = { tools: true, toolCalls: true };
    expect(toolSupportOf('{% if tools %}<tools>{% endif %}<tool_call>', both)).toEqual({
      format: 'hermes',
      templateTakesTools: true,
      templateTakesCalls: true,
    });
    expect(toolSupportOf('{% if tools %}{{ "<|python_tag|>" }}{% endif %}', both)).toEqual({
      format: 'llama3',
      templateTakesTools: true,
      templateTakesCalls: true,
    });
    expect(toolSupportOf('{% for tool in tools %}[AVAILABLE_TOOLS]{% endfor %}[TOOL_CALLS]', both)).toEqual({
      format: 'mistral',
      templateTakesTools: true,
      templateTakesCalls: true,
    });
    expect(toolSupportOf(null, { tools: false, toolCalls: false })).toEqual({ format: 'hermes', templateTakesTools: false, templateTakesCalls: false });
    // Calls rendered, tools not (DeepSeek V3.1): the family's format all the same.
    expect(toolSupportOf('<｜tool▁calls▁begin｜>{{ call.name }}<｜tool▁sep｜>', { tools: false, toolCalls: true })).toEqual({
      format: 'deepseek-v3.1',
      templateTakesTools: false,
      templateTakesCalls: true,
    });
    // A template that does not render tools gets the Hermes system prompt, whatever markers it names.
    expect(toolSupportOf('{{ "[TOOL_CALLS]" }}', { tools: false, toolCalls: false })).toEqual({
      format: 'hermes',
      templateTakesTools: false,
      templateTakesCalls: false,
    });
  });
});

describe('the forced-call grammar', () => {
  const callGrammar = 'root ::= "{" val0 "}"\nval0 ::= "\\"a\\""';

  it('wraps the JSON-schema grammar of a call in the format’s markers, one call or several', () => {
    expect(wrapToolCallGrammar('hermes', callGrammar, false)).toBe(
      'root ::= "<tool_call>\\n" tool-call "\\n</tool_call>"\ntool-call ::= "{" val0 "}"\nval0 ::= "\\"a\\""',
    );
    expect(wrapToolCallGrammar('hermes', callGrammar, true)).toContain('("\\n<tool_call>\\n" tool-call "\\n</tool_call>")*');
    expect(wrapToolCallGrammar('mistral', callGrammar, false).split('\n')[0]).toBe('root ::= "[TOOL_CALLS][" tool-call "]"');
    expect(wrapToolCallGrammar('llama3', callGrammar, false).split('\n')[0]).toBe('root ::= tool-call');
    expect(() => wrapToolCallGrammar('hermes', 'value ::= "x"', false)).toThrow(/root rule/);
  });

  it('builds the schema of one call: the name a constant, the parameters as arguments (parameters for Llama 3)', () => {
    const tool = { name: 'a', parameters: { type: 'object', properties: { x: { type: 'integer' } } } };
    expect(toolCallSchema('hermes', [tool])).toEqual({ type: 'object', properties: { name: { const: 'a' }, arguments: tool.parameters } });
    expect(toolCallSchema('llama3', [{ name: 'b' }])).toEqual({
      type: 'object',
      properties: { name: { const: 'b' }, parameters: { type: 'object', properties: {} } },
    });
    expect(toolCallSchema('hermes', [tool, { name: 'b' }])).toMatchObject({
      oneOf: [{ properties: { name: { const: 'a' } } }, { properties: { name: { const: 'b' } } }],
    });
  });
});
