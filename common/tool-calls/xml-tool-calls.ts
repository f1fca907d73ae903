/**
 * Qwen3-Coder's XML tool calls (also Qwen3.5's, Nemotron 3 Nano's and StepFun 3.5's, as llama.cpp's
 * `common_chat_params_init_qwen3_coder` reads them): each call
 * `<tool_call>\n<function=NAME>\n<parameter=ARG>\nVALUE\n</parameter>\n…</function>\n</tool_call>`, a
 * parameter whose schema is a string taken as its text, any other as JSON (its text when it is not
 * JSON). The first call may come without its `<tool_call>`. Pure: no model, no I/O.
 */
import { parseJsonOr } from '../parse-json.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';

const CALL = /(?:<tool_call>\s*)?<function=([^>\n]+)>\n?([\s\S]*?)<\/function>\s*(?:<\/tool_call>|$)/g;
const PARAMETER = /<parameter=([^>\n]+)>\n?([\s\S]*?)\n?<\/parameter>/g;

/** Whether a parameter's schema is a string: its value is written and read as text, not as JSON. */
export function isTextParameter(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const { type, enum: values, const: constant } = schema as { type?: unknown; enum?: unknown; const?: unknown };
  if (type === 'string' || typeof constant === 'string') return true;
  return Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === 'string');
}

/** The call's arguments as JSON text, each value typed by its tool's schema. */
function argumentsOf(body: string, tool: ToolFunction | undefined): string {
  const properties = (tool?.parameters?.properties ?? {}) as Record<string, unknown>;
  const args: Record<string, unknown> = {};
  for (const [, name, raw] of body.matchAll(PARAMETER)) {
    const key = name!.trim();
    args[key] = isTextParameter(properties[key]) ? raw : parseJsonOr(raw!.trim(), raw);
  }
  return JSON.stringify(args);
}

/** The XML calls in `text` (only whole ones with `closedOnly`), and the text before the first. */
export function parseXmlCalls(text: string, tools: readonly ToolFunction[], closedOnly: boolean): { content: string; calls: ParsedToolCall[]; end: number } {
  const calls: ParsedToolCall[] = [];
  let first = -1;
  let end = 0;
  for (const match of text.matchAll(CALL)) {
    if (closedOnly && !match[0].trimEnd().endsWith('</tool_call>')) break;
    if (first < 0) first = match.index;
    const name = match[1]!.trim();
    calls.push({ name, arguments: argumentsOf(match[2]!, tools.find((tool) => tool.name === name)) });
    end = match.index + match[0].length;
  }
  return { content: first < 0 ? text : text.slice(0, first), calls, end };
}

/** `grammar`'s rules renamed with `prefix` (its root becomes `<prefix>root`): literals and character classes left as they are. */
export function prefixRules(grammar: string, prefix: string): string {
  const names = new Set([...grammar.matchAll(/^([A-Za-z][\w-]*) ::=/gm)].map((m) => m[1]!));
  return grammar.replace(/"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[A-Za-z][\w-]*/g, (token) => (names.has(token) ? `${prefix}${token}` : token));
}

/**
 * The whole grammar of a forced XML answer: one call to one of `tools` (or, `parallel`, one or more),
 * each parameter in its schema's order; a string parameter as text with no "<" (an enum: one of its
 * values), any other as its JSON-schema grammar (`valueGrammars[i][j]`, node-llama-cpp's, renamed apart).
 */
export function xmlToolCallGrammar(tools: readonly ToolFunction[], valueGrammars: readonly (readonly (string | null)[])[], parallel: boolean): string {
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
      return `"<parameter=${name}>\\n" (${value}) "\\n</parameter>\\n"`;
    });
    return `"<function=${tool.name}>\\n" ${parameters.join(' ')} "</function>\\n"`;
  });
  rules.unshift(
    `root ::= xml-call${parallel ? ' ("\\n" xml-call)*' : ''}`,
    `xml-call ::= "<tool_call>\\n" (${alternatives.join(' | ')}) "</tool_call>"`,
    // Text with no "<", so it cannot run into the closing tag; at least one character.
    'xml-text ::= [^<]+',
  );
  return rules.join('\n');
}
