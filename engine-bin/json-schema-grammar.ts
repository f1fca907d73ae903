/**
 * A JSON schema (already checked against the subset node-llama-cpp can express, common/json-schema-subset.ts)
 * as GBNF grammar text, by node-llama-cpp's own JSON-schema grammar (`llama.createGrammarForJsonSchema`,
 * which also compiles it, so the text is known to parse). node-llama-cpp ends the root rule with four
 * newlines and any number more (LlamaChat stops on them); here the grammar ends with the JSON value, so
 * once the value is whole only end-of-generation can follow and the generation stops by itself.
 * Numbers are bounded to what parses back exactly: node-llama-cpp allows 16 integer digits and an exponent
 * of 16 digits (so `1e400`, which parses as Infinity, or integers past 2^53); here at most 15 integer
 * digits (a safe integer), 15 decimals and no exponent.
 * `null` asks for any JSON object (OpenAI's `json_object` mode).
 */
import type { Llama } from 'node-llama-cpp';

/** Any JSON object, in node-llama-cpp's terms. */
const ANY_OBJECT = { type: 'object', additionalProperties: true } as const;

/** node-llama-cpp's number terminals (3.21.1's GbnfNumber), fractional and integer, and their bounded forms. */
const INTEGER_PART = '"-"? ("0" | [1-9] [0-9]{0,15})';
const EXPONENT = ' ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?';
const NUMBER_BOUNDS: readonly (readonly [string, string])[] = [
  [`${INTEGER_PART} ("." [0-9]{1,16})?${EXPONENT}`, '"-"? ("0" | [1-9] [0-9]{0,14}) ("." [0-9]{1,15})?'],
  [`${INTEGER_PART}${EXPONENT}`, '"-"? ("0" | [1-9] [0-9]{0,14})'],
];

/** The end node-llama-cpp puts on the root rule (3.21.1's getGbnfGrammarForGbnfJsonSchema). */
const TRAILING_NEWLINES = ' "\\n\\n\\n\\n" [\\n]*';

export async function jsonSchemaGrammar(llama: Llama, schema: Record<string, unknown> | null): Promise<string> {
  // Its parameter type is inferred from a literal schema; this one is checked at run time (json-schema-subset.ts).
  const grammar = (await llama.createGrammarForJsonSchema((schema ?? ANY_OBJECT) as never)).grammar;
  const [root, ...rules] = grammar.split('\n');
  if (!root?.startsWith('root ::= ') || !root.endsWith(TRAILING_NEWLINES)) {
    throw new Error(`node-llama-cpp's JSON-schema grammar no longer ends its root rule with ${TRAILING_NEWLINES.trim()} (its version changed?)`);
  }
  let bounded = [root.slice(0, -TRAILING_NEWLINES.length), ...rules].join('\n');
  for (const [from, to] of NUMBER_BOUNDS) bounded = bounded.replaceAll(from, to);
  if (bounded.includes('[eE]'))
    throw new Error("node-llama-cpp's JSON-schema grammar writes numbers differently now (its version changed?): they could not be bounded");
  return bounded;
}
