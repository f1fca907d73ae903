/**
 * Tool-call formats that are JSON after an opening marker (and before a closing one, where the family
 * writes one), each call an object whose keys the family names — one line each, as llama.cpp's parsers
 * read them:
 * - `command-r7b` (also Cohere2 MoE): `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters": …}, …]<|END_ACTION|>`;
 * - `command-r-plus`: `Action:\n```json\n[{"tool_name": …, "parameters": …}, …]\n```` ;
 * - `nemotron-v2`: `<TOOLCALL>[{"name": …, "arguments": …}, …]</TOOLCALL>`;
 * - `apriel`: `<tool_calls>[{"name": …, "arguments": …}, …]</tool_calls>`;
 * - `firefunction-v2`: ` functools[{"name": …, "arguments": …}, …]`;
 * - `apertus`: `<|tools_prefix|>[{"NAME": {…arguments}}, …]<|tools_suffix|>` (the name is the key);
 * - `minimax-m1`: `<tool_calls>\n{"name": …, "arguments": …}\n{…}\n</tool_calls>` (one object per line);
 * - `gigachat3`: `<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": …, "arguments": …}` (one call);
 * - `gigachat3.1`: `<|function_call|>{"name": …, "arguments": …}` (one call).
 * Read whole (`parseMarkedJson`) and forced under a grammar (`markedJsonGrammar`). Pure: no model, no I/O.
 */
import { parseJsonOr } from '../parse-json.js';
import { asToolCallRule } from './tool-call-grammar.js';
import type { ParsedToolCall } from './tool-call-types.js';

export interface MarkedJsonFormat {
  open: string;
  /** The closing marker; '' where the calls run to the end of the answer. */
  close: string;
  /** How the calls are laid out: a JSON array, one object per line, or a single object (one call). */
  layout: 'array' | 'lines' | 'single';
  /** The key of a call's name; null where the name is the call object's only key and the arguments its value. */
  name: string | null;
  arguments: string;
  /** A key each call carries its index under, as text (Command R7B's `tool_call_id`). */
  index?: string;
}

export const MARKED_JSON_FORMATS = {
  'command-r7b': { open: '<|START_ACTION|>', close: '<|END_ACTION|>', layout: 'array', name: 'tool_name', arguments: 'parameters', index: 'tool_call_id' },
  'command-r-plus': { open: 'Action:\n```json\n', close: '\n```', layout: 'array', name: 'tool_name', arguments: 'parameters' },
  'nemotron-v2': { open: '<TOOLCALL>', close: '</TOOLCALL>', layout: 'array', name: 'name', arguments: 'arguments' },
  apriel: { open: '<tool_calls>', close: '</tool_calls>', layout: 'array', name: 'name', arguments: 'arguments' },
  'firefunction-v2': { open: ' functools', close: '', layout: 'array', name: 'name', arguments: 'arguments' },
  apertus: { open: '<|tools_prefix|>', close: '<|tools_suffix|>', layout: 'array', name: null, arguments: '' },
  'minimax-m1': { open: '<tool_calls>\n', close: '\n</tool_calls>', layout: 'lines', name: 'name', arguments: 'arguments' },
  gigachat3: { open: '<|message_sep|>\n\nfunction call<|role_sep|>\n', close: '', layout: 'single', name: 'name', arguments: 'arguments' },
  'gigachat3.1': { open: '<|function_call|>', close: '', layout: 'single', name: 'name', arguments: 'arguments' },
} as const satisfies Record<string, MarkedJsonFormat>;

export type MarkedJsonFormatName = keyof typeof MARKED_JSON_FORMATS;

export const isMarkedJsonFormat = (format: string): format is MarkedJsonFormatName => format in MARKED_JSON_FORMATS;

/** The JSON values between the markers: an array's elements, the objects of the lines, or the one object. */
function itemsOf(body: string): unknown[] | null {
  const value = parseJsonOr(body, undefined);
  if (Array.isArray(value)) return value;
  if (typeof value === 'object' && value !== null) return [value];
  // One object per line (MiniMax M1 writes its calls so).
  const lines = body
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => parseJsonOr(line.trim(), undefined));
  return lines.length > 0 && lines.every((line) => typeof line === 'object' && line !== null && !Array.isArray(line)) ? lines : null;
}

/** One call from a JSON value in the format's keys; null when it is not one. */
function callOf(format: MarkedJsonFormat, item: unknown): ParsedToolCall | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
  const call = item as Record<string, unknown>;
  let name: unknown;
  let args: unknown;
  if (format.name === null) {
    const keys = Object.keys(call);
    if (keys.length !== 1) return null;
    [name, args] = [keys[0], call[keys[0]!]];
  } else [name, args] = [call[format.name], call[format.arguments] ?? {}];
  if (typeof name !== 'string' || name === '') return null;
  return { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) };
}

/** The calls after the format's opening marker, and the text before it; no calls unless every item is one. */
export function parseMarkedJson(format: MarkedJsonFormat, text: string): { content: string; calls: ParsedToolCall[] } {
  // The marker without its surrounding whitespace, which a model may write otherwise.
  const open = format.open.trim();
  const at = text.indexOf(open);
  if (at < 0) return { content: text, calls: [] };
  let body = text.slice(at + open.length);
  const close = format.close.trim();
  if (close && body.includes(close)) body = body.slice(0, body.indexOf(close));
  const items = itemsOf(body.trim());
  const calls = items?.map((item) => callOf(format, item)) ?? [];
  if (calls.length === 0 || calls.some((call) => call === null)) return { content: text, calls: [] };
  return { content: text.slice(0, at), calls: calls as ParsedToolCall[] };
}

const CALL_INDEXES = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

/** The JSON schema of one call in the format's keys (the function's name as a constant). */
export function markedJsonCallSchema(format: MarkedJsonFormat, name: string, parameters: Record<string, unknown>): Record<string, unknown> {
  if (format.name === null) return { type: 'object', properties: { [name]: parameters }, required: [name] };
  return {
    type: 'object',
    // The index as a digit: a free string would let a forced call's grammar write one without end.
    properties: { ...(format.index ? { [format.index]: { enum: CALL_INDEXES } } : {}), [format.name]: { const: name }, [format.arguments]: parameters },
  };
}

/**
 * The whole grammar of a forced answer in the format: its markers around one call (`parallel` and a layout that allows it: one or more), `callGrammar`
 * the call's JSON-schema grammar.
 */
export function markedJsonGrammar(format: MarkedJsonFormat, callGrammar: string, parallel: boolean): string {
  const rules = asToolCallRule(callGrammar);
  const calls = {
    array: `"[" tool-call${parallel ? ' (", " tool-call)*' : ''} "]"`,
    lines: `tool-call${parallel ? ' ("\\n" tool-call)*' : ''}`,
    single: 'tool-call',
  }[format.layout];
  return `root ::= ${[JSON.stringify(format.open), calls, ...(format.close ? [JSON.stringify(format.close)] : [])].join(' ')}\n${rules}`;
}
