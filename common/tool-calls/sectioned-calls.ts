/**
 * Tool-call formats whose calls each stand between their own markers with the name and the arguments'
 * JSON in set places, in a section or (section null) one after another — one line each, as llama.cpp's
 * parsers read them:
 * - `deepseek-r1`: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`;
 * - `deepseek-v3.1`: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>`;
 * - `kimi-k2`: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>`;
 * - `solar-open`: `<|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}<|tool_call:end|>…<|calls|>`;
 * - `mistral-args` (Ministral 3, Devstral): `[TOOL_CALLS]NAME[ARGS]{…}`, once per call;
 * - `mistral-call-id` (Mistral Small 3.2): `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}`, once per call;
 * - `functionary-v3.1`: `<function=NAME>{…}</function>`, once per call;
 * - `functionary-v3.2`: `>>>NAME\n{…}` once per call, the first without its `>>>` (the generation prompt
 *   ends with it), or `all\n` and the answer's text first.
 * In the markers, `{index}` stands for the call's index and `{id}` for the call id the model makes up.
 * Read whole (`parseSectionedCalls`) and forced under a grammar (`sectionedCallGrammar`). Pure: no model, no I/O.
 */
import { escapeRegExp as escape } from '../regexp-text.js';
import { parseJsonOr } from '../parse-json.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';
import { prefixRules } from './tool-call-grammar.js';

export interface SectionedFormat {
  /** The markers around all the calls; null where the calls follow one another with nothing around them. */
  section: [open: string, close: string] | null;
  /** The call's own markers, before the name and after the arguments (after: '' where the next call or the end closes it). */
  call: [open: string, close: string];
  /** What stands before the name. */
  name: string;
  /** What stands between the name and the arguments, and after the arguments. */
  arguments: [before: string, after: string];
  /** The generation prompt ends with the first call's opening marker (Functionary v3.2's `>>>`); an answer then starts with `content` instead of a call. */
  bareFirst?: { content: string };
}

export const SECTIONED_FORMATS = {
  'deepseek-r1': {
    section: ['<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>'],
    call: ['<｜tool▁call▁begin｜>', '<｜tool▁call▁end｜>'],
    name: 'function<｜tool▁sep｜>',
    arguments: ['\n```json\n', '\n```'],
  },
  'deepseek-v3.1': {
    section: ['<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>'],
    call: ['<｜tool▁call▁begin｜>', '<｜tool▁call▁end｜>'],
    name: '',
    arguments: ['<｜tool▁sep｜>', ''],
  },
  'kimi-k2': {
    section: ['<|tool_calls_section_begin|>', '<|tool_calls_section_end|>'],
    call: ['<|tool_call_begin|>', '<|tool_call_end|>'],
    name: 'functions.',
    arguments: [':{index}<|tool_call_argument_begin|>', ''],
  },
  'solar-open': {
    section: ['<|tool_calls|>', '<|calls|>'],
    call: ['<|tool_call:begin|>', '<|tool_call:end|>'],
    name: '{id}<|tool_call:name|>',
    arguments: ['<|tool_call:args|>', ''],
  },
  'mistral-args': { section: null, call: ['[TOOL_CALLS]', ''], name: '', arguments: ['[ARGS]', ''] },
  'mistral-call-id': { section: null, call: ['[TOOL_CALLS]', ''], name: '', arguments: ['[CALL_ID]{id}[ARGS]', ''] },
  'functionary-v3.1': { section: null, call: ['<function=', '</function>'], name: '', arguments: ['>', ''] },
  'functionary-v3.2': { section: null, call: ['>>>', ''], name: '', arguments: ['\n', ''], bareFirst: { content: 'all\n' } },
} as const satisfies Record<string, SectionedFormat>;

export type SectionedFormatName = keyof typeof SECTIONED_FORMATS;

export const isSectionedFormat = (format: string): format is SectionedFormatName => format in SECTIONED_FORMATS;

/** Where a format's calls begin: its section's marker, or its first call's. */
export const sectionStart = (format: SectionedFormat): string => format.section?.[0] ?? format.call[0];

const PLACEHOLDERS = { '{index}': { pattern: '\\d+', grammar: '[0-9]' }, '{id}': { pattern: '[A-Za-z0-9_-]+', grammar: '[a-zA-Z0-9]{9}' } } as const;

/** A marker as a pattern (`as: 'pattern'`) or a GBNF sequence (`as: 'grammar'`), its placeholders filled in. */
function piece(text: string, as: 'pattern' | 'grammar'): string {
  const parts = text.split(/(\{index\}|\{id\})/).filter((part) => part !== '');
  return parts
    .map((part) => (part in PLACEHOLDERS ? PLACEHOLDERS[part as keyof typeof PLACEHOLDERS][as] : as === 'pattern' ? escape(part) : JSON.stringify(part)))
    .join(as === 'pattern' ? '' : ' ');
}

/** The calls (each whose arguments parse), and the text before the first (its section's marker). */
export function parseSectionedCalls(format: SectionedFormat, text: string): { content: string; calls: ParsedToolCall[] } {
  if (format.bareFirst) {
    // The answer's text after its header, or a first call whose opening marker the prompt wrote.
    const header = format.bareFirst.content;
    if (text.startsWith(header)) return parseSectionedCalls({ ...format, bareFirst: undefined }, text.slice(header.length));
    const parsed = parseSectionedCalls({ ...format, bareFirst: undefined }, format.call[0] + text);
    return parsed.calls.length > 0 ? { content: parsed.content, calls: parsed.calls } : { content: text, calls: [] };
  }
  const at = text.indexOf(sectionStart(format));
  if (at < 0) return { content: text, calls: [] };
  // A call with no closing marker ends where the next call, the section's end or the text does.
  const end =
    format.arguments[1] || format.call[1]
      ? `${piece(format.arguments[1], 'pattern')}${escape(format.call[1])}`
      : `(?=${[format.call[0], format.section?.[1]]
          .filter(Boolean)
          .map((m) => escape(m!))
          .join('|')}|$)`;
  const call = new RegExp(
    `${escape(format.call[0])}${piece(format.name, 'pattern')}([^\\s<\\[]+?)${piece(format.arguments[0], 'pattern')}([\\s\\S]*?)${end}`,
    'g',
  );
  const calls: ParsedToolCall[] = [];
  for (const [, name, body] of text.slice(at).matchAll(call)) {
    const args = parseJsonOr(body!.trim(), undefined);
    if (typeof args === 'object' && args !== null && !Array.isArray(args)) calls.push({ name: name!, arguments: JSON.stringify(args) });
  }
  return calls.length > 0 ? { content: text.slice(0, at), calls } : { content: text, calls: [] };
}

/**
 * The grammar of a forced answer: one call to one of `tools` (`parallel`: one or more), in the section where there is one, each tool's arguments by
 * its JSON-schema grammar (renamed apart).
 */
export function sectionedCallGrammar(format: SectionedFormat, tools: readonly ToolFunction[], argumentGrammars: readonly string[], parallel: boolean): string {
  const rules: string[] = [];
  const sequence = (...texts: string[]): string =>
    texts
      .filter((text) => text !== '')
      .map((text) => piece(text, 'grammar'))
      .join(' ');
  const alternatives = tools.map((tool, i) => {
    rules.push(prefixRules(argumentGrammars[i]!, `a${i}-`));
    return [
      sequence(format.call[0], format.name),
      JSON.stringify(tool.name),
      sequence(format.arguments[0]),
      `a${i}-root`,
      sequence(format.arguments[1], format.call[1]),
    ]
      .filter(Boolean)
      .join(' ');
  });
  const calls = format.bareFirst
    ? `bare-call${parallel ? ' sectioned-call*' : ''}\nbare-call ::= ${alternatives.map((alternative) => alternative.replace(`${JSON.stringify(format.call[0])} `, '')).join(' | ')}`
    : `sectioned-call${parallel ? ' sectioned-call*' : ''}`;
  return [
    `root ::= ${format.section ? `${JSON.stringify(format.section[0])} ${calls} ${JSON.stringify(format.section[1])}` : calls}`,
    `sectioned-call ::= ${alternatives.join(' | ')}`,
    ...rules,
  ].join('\n');
}
