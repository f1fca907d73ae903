/**
 * A chat request's prompt with its tools, the same for every engine kind (llama-server is spoken to by
 * tokens, so its own tool support is not used): the history's tool calls and tool results as the
 * template reads them, the offered tools through the template's `tools` variable when it renders them,
 * else in a Hermes system prompt (common/tool-calls/tool-prompt.ts); and the tool plan the answer is
 * read by — the family's call format, how many calls it may hold, and, for a forced call (`tool_choice`
 * "required" or a named function), the grammar that makes the answer a valid call.
 */
import type { ChatMessage, ChatTemplateOptions } from '../../common/tokenizer-protocol.js';
import type { ToolCallFormat } from '../../common/tool-calls/tool-call-format.js';
import { argumentsSchema, toolCallSchema, wrapToolCallGrammar } from '../../common/tool-calls/tool-call-grammar.js';
import { harmonyCallGrammar } from '../../common/tool-calls/harmony-calls.js';
import { EXPRESSION_FORMATS, expressionCallGrammar, isExpressionFormat } from '../../common/tool-calls/expression-calls.js';
import { isSectionedFormat, sectionedCallGrammar, SECTIONED_FORMATS } from '../../common/tool-calls/sectioned-calls.js';
import { isMarkedJsonFormat, markedJsonCallSchema, markedJsonGrammar, MARKED_JSON_FORMATS } from '../../common/tool-calls/marked-json-calls.js';
import { isTextParameter, isXmlFormat, XML_FORMATS, xmlToolCallGrammar } from '../../common/tool-calls/xml-tool-calls.js';
import type { ToolFunction } from '../../common/tool-calls/tool-call-types.js';
import { withToolsInPlainTurns, withToolsInSystemPrompt } from '../../common/tool-calls/tool-prompt.js';
import type { Tokenizer } from '../tokenizer.js';
import { grammarOfSchema } from './response-format.js';
import type { ChatCompletionRequest } from './openai-schemas.js';

/** How the answer to a request with tools is read. */
export interface ToolPlan {
  format: ToolCallFormat;
  /** The offered tools (their schemas type an XML call's values). */
  tools: ToolFunction[];
  /** 1 with `parallel_tool_calls: false`. */
  maxCalls: number;
  /** The GBNF of a forced call; absent when the model chooses (`auto`). */
  grammar?: string;
}

type Message = ChatCompletionRequest['messages'][number];

/** A message's text: text parts joined by newlines, as llama-server joins them for a template that reads strings; empty when null. */
export const textOf = (content: Message['content']): string =>
  content === null ? '' : typeof content === 'string' ? content : content.map((part) => part.text).join('\n');

/** A request's thinking budget in tokens (`thinking_budget_tokens`, or llama-server's `reasoning_budget_tokens`); -1 is none. */
export const thinkingBudgetOf = (body: ChatCompletionRequest): number => body.thinking_budget_tokens ?? body.reasoning_budget_tokens ?? -1;

/** What a request sets of its template (thinking on or off, template variables, reasoning effort); a budget of 0 turns thinking off. */
export function templateOptions(body: ChatCompletionRequest): ChatTemplateOptions {
  return {
    ...(thinkingBudgetOf(body) === 0 ? { enableThinking: false } : {}),
    ...(body.chat_template_kwargs ? { kwargs: body.chat_template_kwargs } : {}),
    ...(body.reasoning_effort ? { reasoningEffort: body.reasoning_effort } : {}),
  };
}

/** An OpenAI message as chat templates read it (`developer` is `system`; call arguments as objects). */
export function templateMessage(message: Message): ChatMessage {
  const role = message.role === 'developer' ? 'system' : message.role;
  const turn: ChatMessage = { role, content: textOf(message.content) };
  if (message.reasoning_content) turn.reasoning_content = message.reasoning_content;
  if (message.name) turn.name = message.name;
  if (message.tool_calls?.length) {
    turn.tool_calls = message.tool_calls.map(({ id, function: { name, arguments: args } }) => ({ id, type: 'function', function: { name, arguments: args } }));
  }
  if (message.tool_call_id) turn.tool_call_id = message.tool_call_id;
  return turn;
}

const functionOf = (tool: NonNullable<ChatCompletionRequest['tools']>[number]): ToolFunction => ({
  name: tool.function.name,
  ...(tool.function.description ? { description: tool.function.description } : {}),
  ...(tool.function.parameters ? { parameters: tool.function.parameters } : {}),
});

/** The tools a forced choice allows: all of them for "required", the named one for a named choice; none otherwise. */
function forcedTools(body: ChatCompletionRequest): ToolFunction[] {
  const choice = body.tool_choice;
  const tools = (body.tools ?? []).map(functionOf);
  if (choice === 'required') return tools;
  if (typeof choice === 'object' && choice !== null) return tools.filter((tool) => tool.name === choice.function.name);
  return [];
}

/** The grammar of a forced answer in the family's format: one call to one of `forced` (`parallel`: one or more). */
async function forcedCallGrammar(
  format: ToolCallFormat,
  forced: readonly ToolFunction[],
  parallel: boolean,
  schemaGrammar: (schema: Record<string, unknown>) => Promise<string>,
): Promise<string> {
  if (isXmlFormat(format)) {
    const valueGrammars = await Promise.all(
      forced.map((tool) =>
        Promise.all(
          Object.values(tool.parameters?.properties ?? {}).map((schema) => (isTextParameter(schema) ? null : schemaGrammar(schema as Record<string, unknown>))),
        ),
      ),
    );
    return xmlToolCallGrammar(XML_FORMATS[format], forced, valueGrammars, parallel);
  }
  if (isExpressionFormat(format)) {
    const valueGrammars = await Promise.all(
      forced.map((tool) =>
        Promise.all(
          Object.values(tool.parameters?.properties ?? {}).map((schema) => (isTextParameter(schema) ? null : schemaGrammar(schema as Record<string, unknown>))),
        ),
      ),
    );
    return expressionCallGrammar(EXPRESSION_FORMATS[format], forced, valueGrammars, parallel);
  }
  if (format === 'harmony') return harmonyCallGrammar(forced, await Promise.all(forced.map((tool) => schemaGrammar(argumentsSchema(tool)))));
  if (isSectionedFormat(format))
    return sectionedCallGrammar(SECTIONED_FORMATS[format], forced, await Promise.all(forced.map((tool) => schemaGrammar(argumentsSchema(tool)))), parallel);
  if (isMarkedJsonFormat(format)) {
    const marked = MARKED_JSON_FORMATS[format];
    const calls = forced.map((tool) => markedJsonCallSchema(marked, tool.name, argumentsSchema(tool)));
    return markedJsonGrammar(marked, await schemaGrammar(calls.length === 1 ? calls[0]! : { oneOf: calls }), parallel);
  }
  return wrapToolCallGrammar(format, await schemaGrammar(toolCallSchema(format, forced)), parallel);
}

/** A chat request's prompt: its text and tokens, whether it ends inside the model's thinking, and how its answer is read when it offers tools. */
export interface ChatPrompt {
  text: string;
  tokens: number[];
  thinkingOpen: boolean;
  tools: ToolPlan | null;
}

/**
 * The prompt tokens of a chat request and, when it offers tools, the plan its answer is read by. The
 * caller maps the tokenizer's failures (tokensOf); a parameters schema node-llama-cpp's grammar cannot
 * express is a 400 naming `tools` here.
 */
export async function chatPrompt(tokenizer: Tokenizer, body: ChatCompletionRequest): Promise<ChatPrompt> {
  const messages = body.messages.map(templateMessage);
  const offered = body.tool_choice === 'none' ? [] : (body.tools ?? []);
  const functions = offered.map(functionOf);
  const { format, templateTakesTools, templateTakesCalls } = tokenizer.toolSupport;
  const forced = forcedTools(body);
  const template = templateOptions(body);
  const { text, tokens, thinkingOpen } = templateTakesTools
    ? await tokenizer.applyChatTemplate(messages, { ...(offered.length > 0 ? { tools: offered } : {}), template })
    : await tokenizer.applyChatTemplate(templateTakesCalls ? withToolsInSystemPrompt(messages, functions) : withToolsInPlainTurns(messages, functions), {
        template,
      });
  const prompt = { text, tokens, thinkingOpen };
  if (offered.length === 0) return { ...prompt, tools: null };
  // A named function is called once, as OpenAI does; otherwise as many calls as parallel_tool_calls allows.
  const named = typeof body.tool_choice === 'object' && body.tool_choice !== null;
  const maxCalls = body.parallel_tool_calls === false || named ? 1 : Number.POSITIVE_INFINITY;
  if (forced.length === 0) return { ...prompt, tools: { format, tools: functions, maxCalls } };
  // The parameters are held to what the grammar can express, as response_format's schema is: a keyword
  // it would silently drop is a 400 naming it.
  const schemaGrammar = (schema: Record<string, unknown>): Promise<string> => grammarOfSchema((s) => tokenizer.jsonSchemaGrammar(s), schema, 'tools', 'tools');
  const grammar = await forcedCallGrammar(format, forced, maxCalls > 1, schemaGrammar);
  return { ...prompt, tools: { format, tools: functions, maxCalls, grammar } };
}
