/**
 * Tool calls read from a model's output in its family's format (tool-call-format.ts), whole
 * (`parseToolCalls`) or as the text streams in (`ToolCallStream`). Pure: no model, no I/O. A call whose
 * JSON does not parse, or has no name, is not a call: it stays in the content, as llama-server leaves it.
 * Arguments are accepted under `arguments` or `parameters` in every format and always come out as JSON text.
 */
import { type ToolCallFormat } from './tool-call-format.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';
import { parseHarmonyCalls } from './harmony-calls.js';
import { isSectionedFormat, parseSectionedCalls, sectionStart, SECTIONED_FORMATS, type SectionedFormat, type SectionedFormatName } from './sectioned-calls.js';
import { isMarkedJsonFormat, MARKED_JSON_FORMATS, parseMarkedJson, type MarkedJsonFormatName } from './marked-json-calls.js';
import { isXmlFormat, parseXmlCalls, xmlClose, xmlStart, XML_FORMATS, type XmlFormatName } from './xml-tool-calls.js';
import { EXPRESSION_FORMATS, isExpressionFormat, parseExpressionCalls, type ExpressionFormatName } from './expression-calls.js';
import { parseJsonOr } from '../parse-json.js';

export interface ParsedOutput {
  /** The text outside the calls (trimmed when there are calls). */
  content: string;
  calls: ParsedToolCall[];
}

/** The marker that opens a call in each format (a format may also open one with bare JSON, see `callStart`). */
export const MARKERS: Record<ToolCallFormat, string> = {
  hermes: '<tool_call>',
  llama3: '<|python_tag|>',
  mistral: '[TOOL_CALLS]',
  ...(Object.fromEntries(Object.entries(XML_FORMATS).map(([name, format]) => [name, xmlStart(format)])) as Record<XmlFormatName, string>),
  harmony: '<|channel|>',
  ...(Object.fromEntries(Object.entries(SECTIONED_FORMATS).map(([name, format]) => [name, sectionStart(format)])) as Record<SectionedFormatName, string>),
  ...(Object.fromEntries(Object.entries(MARKED_JSON_FORMATS).map(([name, format]) => [name, format.open.trim()])) as Record<MarkedJsonFormatName, string>),
  ...(Object.fromEntries(Object.entries(EXPRESSION_FORMATS).map(([name, format]) => [name, format.markers[0]])) as Record<ExpressionFormatName, string>),
};

/** Each marker of `texts` and the tag-like pieces in it (`<|…|>`, `<…>`, `[…]`): those that are one control token are written out. */
export const markerPieces = (texts: readonly string[]): string[] =>
  [...new Set(texts.flatMap((text) => [text.trim(), ...(text.match(/<[^<>\s]+>|\[[A-Z_/]+\]/g) ?? [])]))].filter((piece) => piece !== '');

/** The markers a format's calls are written with (an engine writes them out when they are control tokens). */
export function formatMarkers(format: ToolCallFormat): string[] {
  if (isMarkedJsonFormat(format)) return markerPieces([MARKED_JSON_FORMATS[format].open, MARKED_JSON_FORMATS[format].close]);
  if (isExpressionFormat(format)) return markerPieces([...EXPRESSION_FORMATS[format].markers, ...EXPRESSION_FORMATS[format].quotes.flat()]);
  if (isXmlFormat(format)) return markerPieces([...XML_FORMATS[format].call, xmlStart(XML_FORMATS[format])]);
  if (isSectionedFormat(format)) {
    const { section, call, name, arguments: args } = SECTIONED_FORMATS[format];
    return markerPieces([...(section ?? []), ...call, name, ...args]);
  }
  return {
    hermes: ['<tool_call>', '</tool_call>'],
    llama3: ['<|python_tag|>'],
    mistral: ['[TOOL_CALLS]', '[ARGS]'],
    harmony: ['<|start|>', '<|channel|>', '<|constrain|>', '<|message|>', '<|end|>'],
  }[format];
}

/** The formats whose calls also end a thinking that was not closed (llama.cpp's Qwen3-Coder and DSML parsers). */
const CALLS_END_THINKING: ReadonlySet<ToolCallFormat> = new Set(['qwen3-xml', 'dsml-v3.2', 'dsml-v4']);

/** The markers that end a thinking model's thinking before its calls, in `format` (none for most formats). */
export const thinkingEndsBefore = (format: ToolCallFormat): string[] => (CALLS_END_THINKING.has(format) ? [MARKERS[format]] : []);

/** Where else a format's calls may start: Qwen3-Coder's first call without its `<tool_call>`; a harmony or Muse Glimmer message's header or recipient. */
const OTHER_STARTS: Partial<Record<ToolCallFormat, string[]>> = {
  'qwen3-xml': ['<function='],
  harmony: ['<|start|>assistant', ' to=functions.'],
  'muse-glimmer': [' to='],
};

/** The marker a call closes with, where calls go out as they close (Hermes and the XML formats). */
const closeOf = (format: ToolCallFormat): string | null =>
  format === 'hermes' ? HERMES_CLOSE : isXmlFormat(format) ? xmlClose(XML_FORMATS[format]).trim() : null;

/** One call from a parsed JSON value, or null when it is not one. */
function callOf(value: unknown): ParsedToolCall | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { name, arguments: args, parameters } = value as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') return null;
  const given = args ?? parameters ?? {};
  return { name, arguments: typeof given === 'string' ? given : JSON.stringify(given) };
}

/** Calls from a JSON object or array of objects; null unless every element is a call. */
function callsOfJson(text: string): ParsedToolCall[] | null {
  const value = parseJsonOr(text.trim(), undefined);
  const items = Array.isArray(value) ? value : [value];
  const calls = items.map(callOf);
  return calls.length > 0 && calls.every((c) => c !== null) ? (calls as ParsedToolCall[]) : null;
}

const HERMES_CALL = /<tool_call>([\s\S]*?)(<\/tool_call>|$)/g;
const HERMES_CLOSE = '</tool_call>';

function parseHermes(text: string, closedOnly: boolean): ParsedOutput {
  const calls: ParsedToolCall[] = [];
  let content = '';
  let last = 0;
  for (const match of text.matchAll(HERMES_CALL)) {
    if (closedOnly && !match[2]) break;
    const found = callsOfJson(match[1]!);
    if (!found) continue;
    calls.push(...found);
    content += text.slice(last, match.index);
    last = match.index + match[0].length;
  }
  content += text.slice(last);
  return { content, calls };
}

function parseLlama3(text: string): ParsedOutput {
  const marker = text.indexOf(MARKERS.llama3);
  const before = marker >= 0 ? text.slice(0, marker) : '';
  const body = marker >= 0 ? text.slice(marker + MARKERS.llama3.length) : text;
  if (marker < 0 && !body.trimStart().startsWith('{')) return { content: text, calls: [] };
  // One object, or several separated by `;` (Llama 3.2's lightweight form).
  const calls =
    callsOfJson(body) ??
    body
      .split(';')
      .map(callsOfJson)
      .reduce<ParsedToolCall[] | null>((all, one) => (all && one ? [...all, ...one] : null), []);
  return calls && calls.length > 0 ? { content: before, calls } : { content: text, calls: [] };
}

/** `[TOOL_CALLS][{…}, …]`, Mistral's newer `[TOOL_CALLS]name[ARGS]{…}`, or a bare array of calls (the marker is a control token some detokenizers drop). */
function parseMistral(text: string): ParsedOutput {
  const marker = text.indexOf(MARKERS.mistral);
  const before = marker >= 0 ? text.slice(0, marker) : '';
  const body = marker >= 0 ? text.slice(marker + MARKERS.mistral.length) : text;
  if (marker < 0 && !body.trimStart().startsWith('[')) return { content: text, calls: [] };
  const asArray = callsOfJson(body);
  if (asArray) return { content: before, calls: asArray };
  const named: ParsedToolCall[] = [];
  for (const part of body.split(MARKERS.mistral)) {
    const args = part.indexOf('[ARGS]');
    const name = part.slice(0, Math.max(args, 0)).trim();
    const value = args >= 0 ? parseJsonOr(part.slice(args + '[ARGS]'.length).trim(), undefined) : undefined;
    if (!name || value === undefined) return { content: text, calls: [] };
    named.push({ name, arguments: JSON.stringify(value) });
  }
  return { content: before, calls: named };
}

/** The calls in `text` by its format's parser, and the text before them. */
function parseFormat(format: ToolCallFormat, text: string, tools: readonly ToolFunction[]): ParsedOutput {
  if (isMarkedJsonFormat(format)) return parseMarkedJson(MARKED_JSON_FORMATS[format], text);
  if (isExpressionFormat(format)) return parseExpressionCalls(EXPRESSION_FORMATS[format], text);
  if (isSectionedFormat(format)) return parseSectionedCalls(SECTIONED_FORMATS[format], text);
  if (isXmlFormat(format)) return parseXmlCalls(XML_FORMATS[format], text, tools, false);
  if (format === 'harmony') return parseHarmonyCalls(text);
  if (format === 'hermes') return parseHermes(text, false);
  return format === 'llama3' ? parseLlama3(text) : parseMistral(text);
}

/** The calls in a whole output, and the text around them (`tools`: the offered ones, whose schemas type an XML call's values). */
export function parseToolCalls(format: ToolCallFormat, text: string, tools: readonly ToolFunction[] = []): ParsedOutput {
  const header = contentHeader(format);
  const body = header && text.startsWith(header) ? text.slice(header.length) : text;
  const parsed = parseFormat(format, text, tools);
  return parsed.calls.length > 0 ? { content: parsed.content.trim(), calls: parsed.calls } : { content: body, calls: [] };
}

/** What an answer's text starts with in a format whose first call has no marker of its own (Functionary v3.2's `all\n`); null for the others. */
const contentHeader = (format: ToolCallFormat): string | null =>
  isSectionedFormat(format) ? ((SECTIONED_FORMATS[format] as SectionedFormat).bareFirst?.content ?? null) : null;

/**
 * Where the calls begin in `text`: the marker, or (Llama 3 and Mistral) the JSON that opens the answer;
 * `undecided` while the answer is only whitespace or ends in what could still become a marker (held back).
 */
function callStart(format: ToolCallFormat, text: string): { at: number } | { heldFrom: number } {
  const marker = MARKERS[format];
  const at = text.indexOf(marker);
  const starts = [at, ...(OTHER_STARTS[format] ?? []).map((start) => text.indexOf(start))].filter((i) => i >= 0);
  if (starts.length > 0) return { at: Math.min(...starts) };
  const firstVisible = text.search(/\S/);
  if (format === 'llama3' || format === 'mistral') {
    if (firstVisible < 0) return { heldFrom: 0 };
    if (text[firstVisible] === (format === 'llama3' ? '{' : '[')) return { at: firstVisible };
  }
  for (const held of [marker, ...(OTHER_STARTS[format] ?? [])]) {
    for (let length = Math.min(held.length - 1, text.length); length > 0; length--) {
      if (held.startsWith(text.slice(text.length - length))) return { heldFrom: text.length - length };
    }
  }
  return { heldFrom: text.length };
}

export type ToolCallEvent = { type: 'content'; text: string } | { type: 'call'; call: ParsedToolCall };

/**
 * Tool calls parsed as the output streams: text before the first call goes out as content at once (less
 * what could be the start of a marker); a Hermes call goes out as soon as its `</tool_call>` arrives;
 * the other formats' calls, which have no closing marker, at the end. At most `maxCalls` calls.
 */
export class ToolCallStream {
  private text = '';
  private sentContent = 0;
  private sentCalls = 0;
  /** Where the first call starts, once seen: the content before it is sent, and only calls come after. */
  private callsAt: number | null = null;

  constructor(
    private readonly format: ToolCallFormat,
    private readonly maxCalls = Number.POSITIVE_INFINITY,
    private readonly tools: readonly ToolFunction[] = [],
  ) {}

  push(delta: string): ToolCallEvent[] {
    const before = this.text.length;
    this.text += delta;
    const header = contentHeader(this.format);
    if (header !== null && this.callsAt === null && this.sentContent === 0) {
      // The answer opens with its header (skipped) or straight with a call.
      if (header.startsWith(this.text)) return [];
      if (this.text.startsWith(header)) this.sentContent = header.length;
      else this.callsAt = 0;
    }
    if (this.callsAt === null) {
      const start = callStart(this.format, this.text);
      if (!('at' in start)) return this.contentUpTo(start.heldFrom);
      this.callsAt = start.at;
      return [...this.contentUpTo(start.at), ...this.closedHermesCalls()];
    }
    // Parsed again only when a call closed in this delta (a `</tool_call>` ending past what was there).
    const close = closeOf(this.format);
    return close !== null && this.text.includes(close, Math.max(this.callsAt, before - close.length + 1)) ? this.closedHermesCalls() : [];
  }

  /** The Hermes and XML calls closed so far and not yet sent (the other formats have no closing marker: at the end). */
  private closedHermesCalls(): ToolCallEvent[] {
    const rest = this.text.slice(this.callsAt!);
    if (this.format === 'hermes') return this.newCalls(parseHermes(rest, true).calls);
    return isXmlFormat(this.format) ? this.newCalls(parseXmlCalls(XML_FORMATS[this.format], rest, this.tools, true).calls) : [];
  }

  /** What is left once the output ended: the calls not yet sent, then the content after them. */
  end(): ToolCallEvent[] {
    const parsed = parseToolCalls(this.format, this.text, this.tools);
    if (parsed.calls.length === 0) return this.contentUpTo(this.text.length);
    const events = this.newCalls(parsed.calls);
    const sent = this.text.slice(0, this.sentContent).trim();
    const rest = parsed.content.startsWith(sent) ? parsed.content.slice(sent.length) : '';
    if (rest.trim()) events.push({ type: 'content', text: rest });
    return events;
  }

  private contentUpTo(end: number): ToolCallEvent[] {
    if (end <= this.sentContent) return [];
    const text = this.text.slice(this.sentContent, end);
    this.sentContent = end;
    return [{ type: 'content', text }];
  }

  private newCalls(calls: readonly ParsedToolCall[]): ToolCallEvent[] {
    const fresh = calls.slice(this.sentCalls, Math.max(this.sentCalls, this.maxCalls));
    this.sentCalls += fresh.length;
    return fresh.map((call) => ({ type: 'call', call }));
  }
}
