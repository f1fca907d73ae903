/**
 * The XML-like tool-call formats, one table line each as llama.cpp's parsers read them: each call a
 * function's name and its parameters as key and value, a string parameter's value as its text (a CDATA
 * section's inside) and any other as JSON (its text when it is not JSON), typed by the offered tools' schemas:
 * - `qwen3-xml` (Qwen3-Coder, Qwen3.5, Nemotron 3 Nano, StepFun 3.5):
 * `<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>\n</tool_call>`,
 *   the first call also without its `<tool_call>`;
 * - `seed-oss`: `<seed:tool_call>\n<function=NAME>\n<parameter=K>V</parameter>\n</function>\n</seed:tool_call>`;
 * - `minimax-m2`: `<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n</invoke>\n</minimax:tool_call>`;
 * - `glm`: `<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>`;
 * - `dsml-v3.2`, `dsml-v4` (DeepSeek V3.2, V4): `<｜DSML｜function_calls>\n<｜DSML｜invoke name="NAME">\n<｜DSML｜parameter name="K"
 * string="true|false">V</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>`
 *   (V4: `tool_calls`), all calls in one block;
 * - `hy3` (Tencent Hy3): GLM's keys and values with `:opensource` tags, all calls in one `<tool_calls:opensource>` block;
 * - `minimax-m3`: `]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke
 * name="NAME">]<]minimax[>[<K>V]<]minimax[>[</K>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>`;
 * - `kimi-k3`: `<|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|><|open|>argument key="K"
 * type="number"<|sep|>V<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>`;
 * - `minicpm5`: `<function name="NAME"><param name="K">V</param></function>`, with nothing around the calls;
 * - `muse-glimmer`: a message to the function, ` to=NAME<|message|><atem:function_calls>\n<atem:invoke name="NAME">\n<atem:parameter
 * name="K">V</atem:parameter>\n…`,
 *   one per call (the next after `<|eom|><|start|>assistant`).
 * In the markers, `{name}` is the function's or the parameter's name (again: the same name), `{index}` the
 * call's index, `{type}` the parameter's JSON type and `{string}` whether its value is text.
 * Read whole or as calls close (`parseXmlCalls`), forced under a grammar (`xmlToolCallGrammar`). Pure.
 */
import { escapeRegExp as escape } from '../regexp-text.js';
import { parseJsonOr } from '../parse-json.js';
import { prefixRules } from './tool-call-grammar.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';

/** A format as it is written (newlines as the template writes them). */
export interface XmlFormat {
  /** Around each call, or (`shared`) around all of them; ['', ''] where the calls stand alone. */
  call: [open: string, close: string];
  function: [open: string, close: string];
  parameter: [open: string, close: string];
  /** The first call may come without the call's opening marker, straight at its function. */
  bareFirst?: boolean;
  /** All calls share one `call` block. */
  shared?: boolean;
  /** What may stand before a call (Muse Glimmer's role header), and what stands between two (default a newline). */
  lead?: string;
  separator?: string;
}

const NS = ']<]minimax[>[';

export const XML_FORMATS = {
  'qwen3-xml': {
    call: ['<tool_call>\n', '</tool_call>'],
    function: ['<function={name}>\n', '</function>\n'],
    parameter: ['<parameter={name}>\n', '\n</parameter>\n'],
    bareFirst: true,
  },
  'seed-oss': {
    call: ['<seed:tool_call>\n', '</seed:tool_call>'],
    function: ['<function={name}>\n', '</function>\n'],
    parameter: ['<parameter={name}>', '</parameter>\n'],
  },
  'minimax-m2': {
    call: ['<minimax:tool_call>\n', '</minimax:tool_call>'],
    function: ['<invoke name="{name}">\n', '</invoke>\n'],
    parameter: ['<parameter name="{name}">', '</parameter>\n'],
    shared: true,
  },
  glm: { call: ['<tool_call>', '</tool_call>'], function: ['{name}\n', ''], parameter: ['<arg_key>{name}</arg_key>\n<arg_value>', '</arg_value>\n'] },
  'dsml-v3.2': {
    call: ['<｜DSML｜function_calls>\n', '</｜DSML｜function_calls>'],
    function: ['<｜DSML｜invoke name="{name}">\n', '</｜DSML｜invoke>\n'],
    parameter: ['<｜DSML｜parameter name="{name}" string="{string}">', '</｜DSML｜parameter>\n'],
    shared: true,
  },
  'dsml-v4': {
    call: ['<｜DSML｜tool_calls>\n', '</｜DSML｜tool_calls>'],
    function: ['<｜DSML｜invoke name="{name}">\n', '</｜DSML｜invoke>\n'],
    parameter: ['<｜DSML｜parameter name="{name}" string="{string}">', '</｜DSML｜parameter>\n'],
    shared: true,
  },
  hy3: {
    call: ['<tool_calls:opensource>\n', '</tool_calls:opensource>'],
    function: ['<tool_call:opensource>{name}<tool_sep:opensource>\n', '</tool_call:opensource>\n'],
    parameter: ['<arg_key:opensource>{name}</arg_key:opensource>\n<arg_value:opensource>', '</arg_value:opensource>\n'],
    shared: true,
  },
  'minimax-m3': {
    call: [`${NS}<tool_call>\n`, `${NS}</tool_call>`],
    function: [`${NS}<invoke name="{name}">`, `${NS}</invoke>\n`],
    parameter: [`${NS}<{name}>`, `${NS}</{name}>`],
    shared: true,
  },
  'kimi-k3': {
    call: ['<|open|>tools<|sep|>', '<|close|>tools<|sep|>'],
    function: ['<|open|>call tool="{name}" index="{index}"<|sep|>', '<|close|>call<|sep|>'],
    parameter: ['<|open|>argument key="{name}" type="{type}"<|sep|>', '<|close|>argument<|sep|>'],
    shared: true,
  },
  minicpm5: { call: ['', ''], function: ['<function name="{name}">', '</function>'], parameter: ['<param name="{name}">', '</param>'] },
  'muse-glimmer': {
    call: ['', ''],
    function: [' to={name}<|message|><atem:function_calls>\n<atem:invoke name="{name}">\n', '</atem:invoke>\n</atem:function_calls>'],
    parameter: ['<atem:parameter name="{name}">', '</atem:parameter>\n'],
    lead: '<|start|>assistant',
    separator: '<|eom|><|start|>assistant',
  },
} as const satisfies Record<string, XmlFormat>;

export type XmlFormatName = keyof typeof XML_FORMATS;

export const isXmlFormat = (format: string): format is XmlFormatName => format in XML_FORMATS;

/** Where a format's calls begin: its call marker, or (calls that stand alone) its function's. */
export const xmlStart = (format: XmlFormat): string => (format.call[0] || `${format.lead ?? ''}${format.function[0].split('{name}')[0]!}`).trim();

/** The marker that ends a call: its function's closing marker, or the call's where the function has none. */
export const xmlClose = (format: XmlFormat): string => format.function[1].trim() || format.call[1];

/** Whether a parameter's schema is a string: its value is written and read as text, not as JSON. */
export function isTextParameter(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, enum: values, const: constant } = schema as { type?: unknown; enum?: unknown; const?: unknown };
  if (type === 'string' || typeof constant === 'string') return true;
  return Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === 'string');
}

/**
 * A piece of the format as a pattern: `{name}` captured, the other placeholders matched, a newline next
 * to a value optional (`\n?`), any other newline any whitespace.
 */
function pattern(piece: string, valueSide: 'start' | 'end' | null = null): string {
  let text = escape(piece)
    .replace(escape('{name}'), '([^\\s<>"]+)')
    .replaceAll(escape('{name}'), '\\1')
    .replaceAll(escape('{index}'), '\\d+')
    .replaceAll(escape('{type}'), '[a-z]+')
    .replaceAll(escape('{string}'), '(?:true|false)');
  if (valueSide === 'end') text = text.replace(/\n$/, '\\n?');
  if (valueSide === 'start') text = text.replace(/^\n/, '\\n?');
  return text.replace(/\n/g, '\\s*');
}

const CALLS = new Map<XmlFormat, { call: RegExp; parameter: RegExp }>();

function patternsOf(format: XmlFormat): { call: RegExp; parameter: RegExp } {
  let patterns = CALLS.get(format);
  if (!patterns) {
    const open = pattern(format.call[0]);
    // A shared block opens before the first call only and closes after the last.
    const callOpen = `${format.lead ? `(?:${pattern(format.lead)})?` : ''}${format.bareFirst || format.shared ? `(?:${open})?` : open}`;
    const callClose = format.shared ? `(?:${pattern(format.call[1])})?` : `(?:${pattern(format.call[1])}|$)`;
    // The parameter's own closing marker may repeat its name (MiniMax M3's `<K>V</K>`): a back-reference to group 1.
    const parameterClose = pattern(format.parameter[1].replace('{name}', '\u0000'), 'start').replace('\u0000', '\\1');
    patterns = {
      call: new RegExp(`${callOpen}\\s*${pattern(format.function[0])}([\\s\\S]*?)${pattern(format.function[1])}\\s*${callClose}`, 'g'),
      // A CDATA section first: its text may hold the closing marker (MiniCPM5).
      parameter: new RegExp(`${pattern(format.parameter[0], 'end')}(<!\\[CDATA\\[[\\s\\S]*?\\]\\]>|[\\s\\S]*?)${parameterClose}`, 'g'),
    };
    CALLS.set(format, patterns);
  }
  return patterns;
}

/** The call's arguments as JSON text, each value typed by its tool's schema. */
function argumentsOf(format: XmlFormat, body: string, tool: ToolFunction | undefined): string {
  const properties = (tool?.parameters?.properties ?? {}) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [, name, raw] of body.matchAll(patternsOf(format).parameter)) {
    const key = name!.trim();
    const cdata = /^<!\[CDATA\[([\s\S]*)\]\]>$/.exec(raw!);
    args[key] = isTextParameter(properties[key]) ? (cdata ? cdata[1] : raw) : parseJsonOr(raw!.trim(), raw);
  }
  return JSON.stringify(args);
}

/** The calls in `text` (only whole ones with `closedOnly`), and the text before the first. */
export function parseXmlCalls(
  format: XmlFormat,
  text: string,
  tools: readonly ToolFunction[],
  closedOnly: boolean,
): { content: string; calls: ParsedToolCall[] } {
  const calls: ParsedToolCall[] = [];
  let first = -1;
  const close = xmlClose(format).trim();
  for (const match of text.matchAll(patternsOf(format).call)) {
    if (closedOnly && !match[0].trimEnd().includes(close)) break;
    if (first < 0) first = match.index;
    const name = match[1]!.trim();
    calls.push({
      name,
      arguments: argumentsOf(
        format,
        match[2]!,
        tools.find((tool) => tool.name === name),
      ),
    });
  }
  return { content: first < 0 ? text : text.slice(0, first), calls };
}

/** The JSON type a parameter's schema names (Kimi K3 writes it in its markers); "string" when it names none. */
const typeOf = (schema: unknown): string => {
  const type = (schema as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? (type === 'integer' ? 'number' : type) : 'string';
};

/**
 * The whole grammar of a forced answer in the format: one call to one of `tools` (or, `parallel`, one or
 * more), each parameter in its schema's order; a string parameter as text with no "<" (an enum: one of its
 * values), any other as its JSON-schema grammar (`valueGrammars[i][j]`, node-llama-cpp's, renamed apart).
 */
export function xmlToolCallGrammar(
  format: XmlFormat,
  tools: readonly ToolFunction[],
  valueGrammars: readonly (readonly (string | null)[])[],
  parallel: boolean,
): string {
  /** A marker as a GBNF sequence, its placeholders filled in. */
  const sequence = (text: string, fill: { name?: string; text?: boolean; schema?: unknown } = {}): string =>
    text
      .split(/(\{name\}|\{index\}|\{type\}|\{string\})/)
      .filter((part) => part !== '')
      .map((part) =>
        part === '{name}'
          ? JSON.stringify(fill.name ?? '')
          : part === '{index}'
            ? '[1-9]'
            : part === '{type}'
              ? JSON.stringify(typeOf(fill.schema))
              : part === '{string}'
                ? JSON.stringify(String(fill.text === true))
                : JSON.stringify(part),
      )
      .join(' ');
  const rules: string[] = [];
  const alternatives = tools.map((tool, i) => {
    const properties = Object.entries((tool.parameters?.properties ?? {}) as Record<string, unknown>);
    const parameters = properties.map(([name, schema], j) => {
      const grammar = valueGrammars[i]?.[j] ?? null;
      const values = (schema as { enum?: unknown[] }).enum;
      let value: string;
      if (grammar !== null) {
        rules.push(prefixRules(grammar, `v${i}-${j}-`));
        value = `v${i}-${j}-root`;
      } else value = Array.isArray(values) && values.length > 0 ? values.map((v) => JSON.stringify(String(v))).join(' | ') : 'xml-text';
      const fill = { name, text: grammar === null, schema };
      return `${sequence(format.parameter[0], fill)} (${value}) ${sequence(format.parameter[1], fill)}`;
    });
    return [sequence(format.function[0], { name: tool.name }), ...parameters, ...(format.function[1] ? [sequence(format.function[1])] : [])].join(' ');
  });
  const [open, close] = format.call.map((marker) => (marker ? `${JSON.stringify(marker)} ` : ''));
  const xmlFunction = `(${alternatives.join(' | ')})`;
  const separator = JSON.stringify(format.separator ?? '\n');
  rules.unshift(
    format.shared
      ? `root ::= ${open}xml-function${parallel ? ` (${separator} xml-function)*` : ''} ${close}`.trimEnd()
      : `root ::= xml-call${parallel ? ` (${separator} xml-call)*` : ''}`,
    ...(format.shared ? [] : [`xml-call ::= ${open}xml-function ${close}`.trimEnd()]),
    `xml-function ::= ${xmlFunction}`,
    // Text with no "<", so it cannot run into the closing tag; at least one character.
    'xml-text ::= [^<]+',
  );
  return rules.join('\n');
}
