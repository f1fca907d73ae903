/**
 * OpenAI's `response_format` as a grammar for the engine: `text` asks for nothing; `json_object` for any
 * JSON object; `json_schema` for a value of its schema, checked against what node-llama-cpp's JSON-schema
 * grammar can express (common/json-schema-subset.ts: a keyword it cannot is a 400 naming the keyword)
 * and converted by node-llama-cpp in the tokenizer child. llama-server's own `grammar` extension is the
 * other way to ask for a grammar; a request gives one or the other. Every grammar ends with its value,
 * so the generation stops there (finish_reason `stop`); `max_tokens` still bounds it (`length` when cut).
 */
import { z } from 'zod';
import { TokenizerError, UnsupportedSchemaError } from '../tokenizer.js';
import { HttpError } from './http-error.js';

export const responseFormatSchema = z.discriminatedUnion(
  'type',
  [
    z.object({ type: z.literal('text') }).strict(),
    z.object({ type: z.literal('json_object') }).strict(),
    z
      .object({
        type: z.literal('json_schema'),
        json_schema: z
          .object({
            name: z.string().regex(/^[\w-]{1,64}$/, 'a name of at most 64 letters, digits, underscores or dashes'),
            description: z.string().nullish(),
            /** Absent: any JSON object. */
            schema: z.record(z.string(), z.unknown()).nullish(),
            /** Whatever it says, the grammar holds the output to the schema. */
            strict: z.boolean().nullish(),
          })
          .strict(),
      })
      .strict(),
  ],
  { error: 'expected {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "json_schema": {…}}' },
);
export type ResponseFormat = z.infer<typeof responseFormatSchema>;

/** What of a request body asks for a grammar. */
export interface GrammarFields {
  readonly response_format?: ResponseFormat | null | undefined;
  readonly grammar?: string | null | undefined;
  readonly ignore_eos?: boolean | null | undefined;
}

/**
 * The grammar a request asks for, if any. `schemaGrammar` makes GBNF of a schema in node-llama-cpp's
 * terms (null: any JSON object), in the tokenizer child.
 */
export async function requestGrammar(
  body: GrammarFields,
  schemaGrammar: (schema: Record<string, unknown> | null) => Promise<string>,
): Promise<string | undefined> {
  const format = body.response_format;
  const structured = format !== undefined && format !== null && format.type !== 'text';
  if (structured && body.grammar) throw new HttpError(400, 'grammar: give either response_format or grammar, not both', 'invalid_request_error', 'grammar');
  return structured ? formatGrammar(format, schemaGrammar) : (body.grammar ?? undefined);
}

/** A grammar (response_format's, `grammar`, a forced tool call's) leaves nothing for ignore_eos to do: once the output is complete, only its end may follow. */
export function checkIgnoreEos(body: GrammarFields, grammar: string | undefined): void {
  if (grammar !== undefined && body.ignore_eos) {
    throw new HttpError(
      400,
      'ignore_eos: cannot be used with a grammar, response_format or a forced tool call (once the output is complete, only its end may follow)',
      'invalid_request_error',
      'ignore_eos',
    );
  }
}

function formatGrammar(
  format: Exclude<ResponseFormat, { type: 'text' }>,
  schemaGrammar: (schema: Record<string, unknown> | null) => Promise<string>,
): Promise<string> {
  return grammarOfSchema(
    schemaGrammar,
    format.type === 'json_object' ? null : (format.json_schema.schema ?? null),
    'response_format',
    'response_format.json_schema.schema',
  );
}

/**
 * A schema's grammar (Tokenizer.jsonSchemaGrammar, or a wrapper of it), the schema's refusals as 400s
 * naming `param`: a keyword the grammar cannot express (`where` the message says it is, code
 * unsupported_schema_keyword) or a schema node-llama-cpp could not convert. Used by response_format and
 * by a forced tool call's parameters.
 */
export async function grammarOfSchema(
  schemaGrammar: (schema: Record<string, unknown> | null) => Promise<string>,
  schema: Record<string, unknown> | null,
  param: string,
  where: string,
): Promise<string> {
  try {
    return await schemaGrammar(schema);
  } catch (error) {
    if (error instanceof UnsupportedSchemaError)
      throw new HttpError(400, `${where}: ${error.message}`, 'invalid_request_error', param, 'unsupported_schema_keyword');
    if (error instanceof TokenizerError && error.code === 'schema_failed')
      throw new HttpError(400, `${param}: ${error.message}`, 'invalid_request_error', param);
    throw error;
  }
}
