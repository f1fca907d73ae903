/**
 * Tool-call formats that are one JSON array of calls between an opening and a closing marker, each call
 * an object whose keys the family names — one line each, as llama.cpp's parsers read them:
 * - `command-r7b`: `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters": …}, …]<|END_ACTION|>`;
 * - `nemotron-v2`: `<TOOLCALL>[{"name": …, "arguments": …}, …]</TOOLCALL>`.
 * Read whole (`parseMarkedJson`) and forced under a grammar (`markedJsonGrammar`). Pure: no model, no I/O.
 */
import { parseJsonOr } from '../parse-json.js';
import { asToolCallRule } from './tool-call-grammar.js';
import type { ParsedToolCall } from './tool-call-types.js';

export interface MarkedJsonFormat {
  open: string;
  close: string;
  name: string;
  arguments: string;
  /** A key each call carries its index under, as text (Command R7B's `tool_call_id`). */
  index?: string;
}

export const MARKED_JSON_FORMATS = {
  'command-r7b': { open: '<|START_ACTION|>', close: '<|END_ACTION|>', name: 'tool_name', arguments: 'parameters', index: 'tool_call_id' },
  'nemotron-v2': { open: '<TOOLCALL>', close: '</TOOLCALL>', name: 'name', arguments: 'arguments' },
} as const satisfies Record<string, MarkedJsonFormat>;

export type MarkedJsonFormatName = keyof typeof MARKED_JSON_FORMATS;

export const isMarkedJsonFormat = (format: string): format is MarkedJsonFormatName => format in MARKED_JSON_FORMATS;

/** The calls after the format's opening marker, and the text before it; no calls unless the whole array parses. */
export function parseMarkedJson(format: MarkedJsonFormat, text: string): { content: string; calls: ParsedToolCall[] } {
  const at = text.indexOf(format.open);
  if (at < 0) return { content: text, calls: [] };
  let body = text.slice(at + format.open.length);
  if (body.includes(format.close)) body = body.slice(0, body.indexOf(format.close));
  const items = parseJsonOr(body.trim(), undefined);
  if (!Array.isArray(items)) return { content: text, calls: [] };
  const calls: ParsedToolCall[] = [];
  for (const item of items) {
    const call = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {};
    const name = call[format.name];
    if (typeof name !== 'string' || name === '') return { content: text, calls: [] };
    const args = call[format.arguments] ?? {};
    calls.push({ name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });
  }
  return { content: text.slice(0, at), calls };
}

const CALL_INDEXES = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

/** The JSON schema of one call in the format's keys (the function's name as a constant). */
export function markedJsonCallSchema(format: MarkedJsonFormat, name: string, parameters: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'object',
    // The index as a digit: a free string would let a forced call's grammar write one without end.
    properties: { ...(format.index ? { [format.index]: { enum: CALL_INDEXES } } : {}), [format.name]: { const: name }, [format.arguments]: parameters },
  };
}

/** The whole grammar of a forced answer in the format: its markers around an array of one call (`parallel`: one or more), `callRoot` the call's JSON-schema grammar. */
export function markedJsonGrammar(format: MarkedJsonFormat, callGrammar: string, parallel: boolean): string {
  const rules = asToolCallRule(callGrammar);
  return `root ::= ${JSON.stringify(format.open)} "[" tool-call${parallel ? ' (", " tool-call)*' : ''} "]" ${JSON.stringify(format.close)}\n${rules}`;
}
