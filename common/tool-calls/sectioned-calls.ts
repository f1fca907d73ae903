/**
 * Tool-call formats that put their calls in a section, each call between its own markers with the name
 * and the arguments' JSON in set places — one line each, as llama.cpp's parsers read them:
 * - `deepseek-r1`: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`;
 * - `kimi-k2`: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>`.
 * Read whole (`parseSectionedCalls`) and forced under a grammar (`sectionedCallGrammar`). Pure: no model, no I/O.
 */
import { escapeRegExp as escape } from '../regexp-text.js';
import { parseJsonOr } from '../parse-json.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';
import { prefixRules } from './tool-call-grammar.js';

export interface SectionedFormat {
  section: [open: string, close: string];
  /** The call's own markers, before the name and after the arguments. */
  call: [open: string, close: string];
  /** What stands before the name. */
  name: string;
  /** What stands between the name and the arguments (`{index}`: the call's index), and after the arguments. */
  arguments: [before: string, after: string];
}

export const SECTIONED_FORMATS = {
  'deepseek-r1': {
    section: ['<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>'],
    call: ['<｜tool▁call▁begin｜>', '<｜tool▁call▁end｜>'],
    name: 'function<｜tool▁sep｜>',
    arguments: ['\n```json\n', '\n```'],
  },
  'kimi-k2': {
    section: ['<|tool_calls_section_begin|>', '<|tool_calls_section_end|>'],
    call: ['<|tool_call_begin|>', '<|tool_call_end|>'],
    name: 'functions.',
    arguments: [':{index}<|tool_call_argument_begin|>', ''],
  },
} as const satisfies Record<string, SectionedFormat>;

export type SectionedFormatName = keyof typeof SECTIONED_FORMATS;

export const isSectionedFormat = (format: string): format is SectionedFormatName => format in SECTIONED_FORMATS;

/** The calls in the format's section (each whose arguments parse), and the text before the section. */
export function parseSectionedCalls(format: SectionedFormat, text: string): { content: string; calls: ParsedToolCall[] } {
  const at = text.indexOf(format.section[0]);
  if (at < 0) return { content: text, calls: [] };
  const pattern = (part: string): string => escape(part).replace(escape('{index}'), '\\d+');
  const call = new RegExp(
    `${escape(format.call[0])}${pattern(format.name)}([^\\s<]+?)${pattern(format.arguments[0])}([\\s\\S]*?)${pattern(format.arguments[1])}${escape(format.call[1])}`,
    'g',
  );
  const calls: ParsedToolCall[] = [];
  for (const [, name, body] of text.slice(at).matchAll(call)) {
    const args = parseJsonOr(body!.trim(), undefined);
    if (typeof args === 'object' && args !== null && !Array.isArray(args)) calls.push({ name: name!, arguments: JSON.stringify(args) });
  }
  return calls.length > 0 ? { content: text.slice(0, at), calls } : { content: text, calls: [] };
}

/** The grammar of a forced answer: the section with one call to one of `tools` (`parallel`: one or more), each tool's arguments by its JSON-schema grammar (renamed apart). */
export function sectionedCallGrammar(format: SectionedFormat, tools: readonly ToolFunction[], argumentGrammars: readonly string[], parallel: boolean): string {
  const rules: string[] = [];
  const literal = (text: string): string => JSON.stringify(text);
  const alternatives = tools.map((tool, i) => {
    rules.push(prefixRules(argumentGrammars[i]!, `a${i}-`));
    const [beforeIndex, afterIndex] = format.arguments[0].split('{index}');
    const between = afterIndex === undefined ? literal(format.arguments[0]) : `${literal(beforeIndex!)} [0-9] ${literal(afterIndex)}`;
    const closing = [format.arguments[1], format.call[1]].filter(Boolean).map(literal).join(' ');
    return `${literal(format.call[0])} ${literal(format.name)} ${literal(tool.name)} ${between} a${i}-root ${closing}`;
  });
  return [
    `root ::= ${literal(format.section[0])} sectioned-call${parallel ? ' sectioned-call*' : ''} ${literal(format.section[1])}`,
    `sectioned-call ::= ${alternatives.join(' | ')}`,
    ...rules,
  ].join('\n');
}
