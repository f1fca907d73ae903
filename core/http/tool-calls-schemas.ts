/**
 * OpenAI's tool-calling request fields, as zod schemas the chat request (openai-schemas.ts) is built
 * from: `tools` (functions with a JSON-schema of their parameters), `tool_choice`, `parallel_tool_calls`,
 * an assistant turn's `tool_calls` and a `tool` turn's `tool_call_id`. Strict like the rest of the surface.
 */
import { z } from 'zod';
import { expectedOneOf } from '../../common/issue-words.js';

/** OpenAI's rule for a function name. */
const functionNameSchema = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a function name is 1 to 64 letters, digits, underscores or dashes');

const toolSchema = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: functionNameSchema,
        description: z.string().nullish(),
        /** The JSON schema of the arguments; a forced call is generated under its grammar. */
        parameters: z.record(z.string(), z.unknown()).nullish(),
        /** OpenAI's strict mode: a forced call here always follows the schema, so it is accepted either way. */
        strict: z.boolean().nullish(),
      })
      .strict(),
  })
  .strict();
export type Tool = z.infer<typeof toolSchema>;

const toolChoiceSchema = z
  .union(
    [z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: functionNameSchema }).strict() }).strict()],
    {
      error: expectedOneOf('"none", "auto", "required" or {"type": "function", "function": {"name": …}}'),
    },
  )
  .nullish();
export type ToolChoice = z.infer<typeof toolChoiceSchema>;

/** A call in an assistant turn of the history. */
const messageToolCallSchema = z
  .object({
    id: z.string().min(1),
    type: z.literal('function'),
    function: z.object({ name: z.string().min(1), arguments: z.string() }).strict(),
  })
  .strict();

/** The chat request's tool fields. */
export const toolRequestFields = {
  tools: z.array(toolSchema).max(128).nullish(),
  tool_choice: toolChoiceSchema,
  parallel_tool_calls: z.boolean().nullish(),
};

/** The message fields of tool calling: an assistant turn's `tool_calls`, a `tool` turn's `tool_call_id`. */
export const toolMessageFields = {
  tool_calls: z.array(messageToolCallSchema).nullish(),
  tool_call_id: z.string().nullish(),
};

interface ToolFieldsOfMessage {
  role: string;
  tool_calls?: unknown[] | null | undefined;
  tool_call_id?: string | null | undefined;
}

/** The rules across a message's fields: `tool_calls` only on an assistant turn, `tool_call_id` exactly on a `tool` turn. */
export function checkToolMessage(message: ToolFieldsOfMessage, ctx: z.RefinementCtx): void {
  if (message.tool_calls != null && message.role !== 'assistant')
    ctx.addIssue({ code: 'custom', path: ['tool_calls'], message: 'only an assistant message carries tool_calls' });
  if (message.role === 'tool' && !message.tool_call_id)
    ctx.addIssue({ code: 'custom', path: ['tool_call_id'], message: 'a tool message needs the tool_call_id of the call it answers' });
  if (message.role !== 'tool' && message.tool_call_id != null)
    ctx.addIssue({ code: 'custom', path: ['tool_call_id'], message: 'only a tool message carries tool_call_id' });
}

interface ToolFieldsOfRequest {
  tools?: Tool[] | null | undefined;
  tool_choice?: ToolChoice;
  response_format?: unknown;
  grammar?: string | null | undefined;
}

/**
 * The rules across the request's tool fields: a forced choice needs tools, and a named one must be among
 * them; a forced call's grammar is the whole answer's, so no other constraint on the same answer can hold with it.
 */
export function checkToolRequest(body: ToolFieldsOfRequest, ctx: z.RefinementCtx): void {
  const choice = body.tool_choice;
  if (choice == null || choice === 'none' || choice === 'auto') return;
  const tools = body.tools ?? [];
  if (tools.length === 0) ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: 'tool_choice forces a call, so it needs tools' });
  else if (typeof choice === 'object' && !tools.some((t) => t.function.name === choice.function.name))
    ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: `names "${choice.function.name}", which is not among the tools` });
  for (const field of ['response_format', 'grammar'] as const) {
    if (body[field] != null) {
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message:
          'cannot be combined with a forced tool call (tool_choice "required" or a named function): the answer is then the call, under the grammar of the tool\'s parameters',
      });
    }
  }
}
