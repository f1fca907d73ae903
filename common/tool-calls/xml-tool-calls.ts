/**
 * The XML-like tool-call formats, one table line each as llama.cpp's parsers read them: each call a
 * function's name and its parameters as key and value, a string parameter's value as its text and any
 * other as JSON (its text when it is not JSON), typed by the offered tools' schemas:
 * - `qwen3-xml` (Qwen3-Coder, Qwen3.5, Nemotron 3 Nano, StepFun 3.5): `<tool_call>\n<function=NAME>\n<parameter=K>\nV\n</parameter>\n</function>\n</tool_call>`,
 *   the first call also without its `<tool_call>`;
 * - `seed-oss`: `<seed:tool_call>\n<function=NAME>\n<parameter=K>V</parameter>\n</function>\n</seed:tool_call>`;
 * - `minimax-m2`: `<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n</invoke>\n</minimax:tool_call>`;
 * - `glm`: `<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>`.
 * Read whole or as calls close (`parseXmlCalls`), forced under a grammar (`xmlToolCallGrammar`). Pure.
 */
import { escapeRegExp as escape } from '../regexp-text.js';
import { parseJsonOr } from '../parse-json.js';
import { prefixRules } from './tool-call-grammar.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';

/** A format as it is written (`{name}`: the function's or the parameter's name; newlines as the template writes them). */
export interface XmlFormat {
  call: [open: string, close: string];
  function: [open: string, close: string];
  parameter: [open: string, close: string];
  /** The first call may come without the call's opening marker, straight at its function. */
  bareFirst?: boolean;
}

export const XML_FORMATS = {
  'qwen3-xml': { call: ['<tool_call>\n', '</tool_call>'], function: ['<function={name}>\n', '</function>\n'], parameter: ['<parameter={name}>\n', '\n</parameter>\n'], bareFirst: true },
  'seed-oss': { call: ['<seed:tool_call>\n', '</seed:tool_call>'], function: ['<function={name}>\n', '</function>\n'], parameter: ['<parameter={name}>', '</parameter>\n'] },
  'minimax-m2': { call: ['<minimax:tool_call>\n', '</minimax:tool_call>'], function: ['<invoke name="{name}">\n', '</invoke>\n'], parameter: ['<parameter name="{name}">', '</parameter>\n'] },
  glm: { call: ['<tool_call>', '</tool_call>'], function: ['{name}\n', ''], parameter: ['<arg_key>{name}</arg_key>\n<arg_value>', '</arg_value>\n'] },
} as const satisfies Record<string, XmlFormat>;

export type XmlFormatName = keyof typeof XML_FORMATS;

export const isXmlFormat = (format: string): format is XmlFormatName => format in XML_FORMATS;

/** Whether a parameter's schema is a string: its value is written and read as text, not as JSON. */
export function isTextParameter(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, enum: values, const: constant } = schema as { type?: unknown; enum?: unknown; const?: unknown };
  if (type === 'string' || typeof constant === 'string') return true;
  return Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === 'string');
}

/**
 * A piece of the format as a pattern: `{name}` captured, a newline next to a value optional (`\n?`), any
 * other newline any whitespace.
 */
function pattern(piece: string, valueSide: 'start' | 'end' | null = null): string {
  let text = escape(piece).replace(escape('{name}'), '([^\\s<>"]+)');
  if (valueSide === 'end') text = text.replace(/\n$/, '\\n?');
  if (valueSide === 'start') text = text.replace(/^\n/, '\\n?');
  return text.replace(/\n/g, '\\s*');
}

const CALLS = new Map<XmlFormat, { call: RegExp; parameter: RegExp }>();

function patternsOf(format: XmlFormat): { call: RegExp; parameter: RegExp } {
  let patterns = CALLS.get(format);
  if (!patterns) {
    const open = pattern(format.call[0]);
    const callOpen = format.bareFirst ? `(?:${open})?` : open;
    patterns = {
      call: new RegExp(`${callOpen}\\s*${pattern(format.function[0])}([\\s\\S]*?)${pattern(format.function[1])}\\s*(?:${pattern(format.call[1])}|$)`, 'g'),
      parameter: new RegExp(`${pattern(format.parameter[0], 'end')}([\\s\\S]*?)${pattern(format.parameter[1], 'start')}`, 'g'),
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
    args[key] = isTextParameter(properties[key]) ? raw : parseJsonOr(raw!.trim(), raw);
  }
  return JSON.stringify(args);
}

/** The calls in `text` (only whole ones with `closedOnly`), and the text before the first. */
export function parseXmlCalls(format: XmlFormat, text: string, tools: readonly ToolFunction[], closedOnly: boolean): { content: string; calls: ParsedToolCall[] } {
  const calls: ParsedToolCall[] = [];
  let first = -1;
  const close = format.call[1];
  for (const match of text.matchAll(patternsOf(format).call)) {
    if (closedOnly && !match[0].trimEnd().endsWith(close)) break;
    if (first < 0) first = match.index;
    const name = match[1]!.trim();
    calls.push({ name, arguments: argumentsOf(format, match[2]!, tools.find((tool) => tool.name === name)) });
  }
  return { content: first < 0 ? text : text.slice(0, first), calls };
}

/**
 * The whole grammar of a forced answer in the format: one call to one of `tools` (or, `parallel`, one or
 * more), each parameter in its schema's order; a string parameter as text with no "<" (an enum: one of its
 * values), any other as its JSON-schema grammar (`valueGrammars[i][j]`, node-llama-cpp's, renamed apart).
 */
export function xmlToolCallGrammar(format: XmlFormat, tools: readonly ToolFunction[], valueGrammars: readonly (readonly (string | null)[])[], parallel: boolean): string {
  const literal = (text: string, name = ''): string => JSON.stringify(text.replace('{name}', name));
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
      return `${literal(format.parameter[0], name)} (${value}) ${literal(format.parameter[1])}`;
    });
    return [literal(format.function[0], tool.name), ...parameters, ...(format.function[1] ? [literal(format.function[1])] : [])].join(' ');
  });
  rules.unshift(
    `root ::= xml-call${parallel ? ' ("\\n" xml-call)*' : ''}`,
    `xml-call ::= ${literal(format.call[0])} (${alternatives.join(' | ')}) ${literal(format.call[1])}`,
    // Text with no "<", so it cannot run into the closing tag; at least one character.
    'xml-text ::= [^<]+',
  );
  return rules.join('\n');
}
