/**
 * Tools for a chat template that does not render them (the generated test model's ChatML, many older
 * templates): the tools described in a Hermes / Qwen-style system prompt, assistant calls written back
 * as `<tool_call>` blocks and tool results as a user turn of `<tool_response>` blocks (what Qwen's own
 * template does), so any template that renders system, user and assistant turns renders a tool conversation;
 * for a template that renders calls but not tools, the tools alone in its system prompt.
 */
import type { ChatMessage } from '../tokenizer-protocol.js';
import type { ToolFunction } from './tool-call-types.js';
import { parseJsonOr } from '../parse-json.js';

/** The system prompt that offers `tools` (Qwen 2.5's wording), and with `hermes` asks for Hermes calls. */
function toolsPrompt(tools: readonly ToolFunction[], hermes: boolean): string {
  const signatures = tools.map((tool) => JSON.stringify({ type: 'function', function: tool })).join('\n');
  return [
    '# Tools',
    '',
    'You may call one or more functions to assist with the user query.',
    '',
    'You are provided with function signatures within <tools></tools> XML tags:',
    `<tools>\n${signatures}\n</tools>`,
    ...(hermes
      ? [
          '',
          'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
          '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
        ]
      : []),
  ].join('\n');
}

/** `messages` with `tools` described in the system prompt (the first system message gains it, or one is put first). */
function withSystemPrompt(messages: readonly ChatMessage[], prompt: string): ChatMessage[] {
  const first = messages[0];
  if (first?.role === 'system') return [{ ...first, content: `${first.content}\n\n${prompt}` }, ...messages.slice(1)];
  return [{ role: 'system', content: prompt }, ...messages];
}

/**
 * `messages` for a template that renders calls and results but not the tools (DeepSeek V3.1,
 * FireFunction v2): the tools described in the system prompt, the calls left to the template's own syntax.
 */
export function withToolsInSystemPrompt(messages: readonly ChatMessage[], tools: readonly ToolFunction[]): ChatMessage[] {
  return tools.length === 0 ? [...messages] : withSystemPrompt(messages, toolsPrompt(tools, false));
}

/**
 * `messages` with tool calls and tool results as plain turns, and `tools` (when offered) in the system
 * prompt: the first system message gains it, or one is put first.
 */
export function withToolsInPlainTurns(messages: readonly ChatMessage[], tools: readonly ToolFunction[]): ChatMessage[] {
  const turns: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      const block = `<tool_response>\n${message.content}\n</tool_response>`;
      const previous = turns.at(-1);
      // Consecutive results (parallel calls) share one user turn.
      if (previous?.role === 'user' && previous.content.startsWith('<tool_response>')) previous.content += `\n${block}`;
      else turns.push({ role: 'user', content: block });
    } else if (message.role === 'assistant' && message.tool_calls?.length) {
      const calls = message.tool_calls.map(
        (call) =>
          `<tool_call>\n${JSON.stringify({ name: call.function.name, arguments: parseJsonOr(call.function.arguments, call.function.arguments) })}\n</tool_call>`,
      );
      turns.push({ role: 'assistant', content: [message.content, ...calls].filter(Boolean).join('\n') });
    } else {
      turns.push({ role: message.role, content: message.content });
    }
  }
  return tools.length === 0 ? turns : withSystemPrompt(turns, toolsPrompt(tools, true));
}
