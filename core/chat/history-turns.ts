/**
 * A conversation's messages as the turns its prompt is rendered from. Messages that failed are left out.
 * A conversation stored from the API (`store: true`) may hold tool calls and tool results: they are
 * written as plain text turns — calls as Hermes `<tool_call>` blocks, results as a user turn of
 * `<tool_response>` blocks — as the API does for a template that does not render tools
 * (common/tool-calls/tool-prompt.ts), so every template renders them and the window can continue such
 * a conversation (it offers no tools itself).
 */
import type { ChatMessageData, Conversation } from '../../common/conversation.js';
import type { ChatMessage } from '../../common/tokenizer-protocol.js';
import { withToolsInPlainTurns } from '../../common/tool-calls/tool-prompt.js';

const turnOf = (message: ChatMessageData): ChatMessage => ({
  role: message.role,
  content: message.content,
  ...(message.reasoning ? { reasoning_content: message.reasoning } : {}),
  ...(message.toolCalls?.length
    ? { tool_calls: message.toolCalls.map(({ id, name, arguments: args }) => ({ id, type: 'function' as const, function: { name, arguments: args } })) }
    : {}),
  ...(message.toolCallId === undefined ? {} : { tool_call_id: message.toolCallId }),
});

/** The system prompt and the history, as template turns with no tool turns left. */
export function historyTurns(conversation: Pick<Conversation, 'systemPrompt' | 'messages'>): ChatMessage[] {
  const messages = conversation.messages.filter((m) => m.error === null).map(turnOf);
  return withToolsInPlainTurns([{ role: 'system', content: conversation.systemPrompt }, ...messages], []);
}
