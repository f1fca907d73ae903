/**
 * Edit-and-resend of a user message: the conversation up to that message, the message with its new
 * text (same id), and nothing after it — the answers and turns that followed the old text no longer
 * follow from the new one. Only a user message can be edited. Core saves it so (`editMessage`); the chat window shows it so at once.
 */
import type { ChatMessageData } from './conversation.js';

export function editedMessages(messages: readonly ChatMessageData[], messageId: string, content: string): ChatMessageData[] {
  const index = messages.findIndex((m) => m.id === messageId);
  if (index === -1) throw new Error(`messageId: there is no message ${messageId} in this conversation`);
  const message = messages[index]!;
  if (message.role !== 'user') throw new Error(`messageId: message ${messageId} is an answer; only your own messages can be edited`);
  return [...messages.slice(0, index), { ...message, content, error: null }];
}
