/**
 * The grammar of a forced tool call (`tool_choice` "required" or a named function): the JSON schema of
 * one call (the function's name as a constant, its parameters' schema as the arguments), which the
 * tokenizer child turns into GBNF with node-llama-cpp's JSON-schema grammar, and the wrapper that makes
 * that call grammar the family's format (`wrapToolCallGrammar`), so what the model writes IS a call the
 * parser reads. Pure text work: no grammar compiler here.
 */
import { argumentsKey, type ToolCallFormat } from './tool-call-format.js';
import type { ToolFunction } from './tool-call-types.js';

/**
 * The formats whose call is one JSON object with `name` (Qwen3-Coder's XML, gpt-oss's harmony, the sectioned and the marked-array formats have their
 * own: xml-tool-calls.ts, harmony-calls.ts, sectioned-calls.ts, marked-json-calls.ts).
 */
export type JsonToolCallFormat = Extract<ToolCallFormat, 'hermes' | 'llama3' | 'mistral'>;

/** A function's arguments schema; one without parameters takes an empty object (node-llama-cpp reads a schema of `{}` as null). */
export const argumentsSchema = (tool: ToolFunction): Record<string, unknown> =>
  tool.parameters && Object.keys(tool.parameters).length > 0 ? tool.parameters : { type: 'object', properties: {} };

/** The JSON schema of one call to any of `tools` (node-llama-cpp's subset: object properties in order, const, oneOf). */
export function toolCallSchema(format: JsonToolCallFormat, tools: readonly ToolFunction[]): Record<string, unknown> {
  const calls = tools.map((tool) => ({
    type: 'object',
    properties: {
      name: { const: tool.name },
      [argumentsKey(format)]: argumentsSchema(tool),
    },
  }));
  return calls.length === 1 ? calls[0]! : { oneOf: calls };
}

/** The root rule of the JSON-schema grammar (engine-bin/json-schema-grammar.ts: node-llama-cpp's, ending with the value). */
const JSON_ROOT = /^root ::= (.*)$/m;

/** A call's JSON-schema grammar with its root renamed `tool-call`, to be wrapped in a format's markers. */
export function asToolCallRule(callGrammar: string): string {
  const root = JSON_ROOT.exec(callGrammar);
  if (!root) throw new Error('the JSON-schema grammar has no root rule');
  return callGrammar.replace(JSON_ROOT, () => `tool-call ::= ${root[1]!}`);
}

/** `grammar`'s rules renamed with `prefix` (its root becomes `<prefix>root`): literals and character classes left as they are. */
export function prefixRules(grammar: string, prefix: string): string {
  const names = new Set([...grammar.matchAll(/^([A-Za-z][\w-]*) ::=/gm)].map((m) => m[1]!));
  return grammar.replace(/"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[A-Za-z][\w-]*/g, (token) => (names.has(token) ? `${prefix}${token}` : token));
}

/**
 * The whole grammar of a forced answer: the JSON-schema grammar of one call (`callGrammar`, its root
 * renamed `tool-call`) inside the format's markers; with `parallel`, one or more calls, else exactly one.
 */
export function wrapToolCallGrammar(format: JsonToolCallFormat, callGrammar: string, parallel: boolean): string {
  const rules = asToolCallRule(callGrammar);
  const wrapped = {
    hermes: `"<tool_call>\\n" tool-call "\\n</tool_call>"${parallel ? ' ("\\n<tool_call>\\n" tool-call "\\n</tool_call>")*' : ''}`,
    llama3: `tool-call${parallel ? ' ("; " tool-call)*' : ''}`,
    mistral: `"[TOOL_CALLS][" tool-call${parallel ? ' (", " tool-call)*' : ''} "]"`,
  }[format];
  return `root ::= ${wrapped}\n${rules}`;
}
