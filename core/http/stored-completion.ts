/**
 * OpenAI's `store: true` on a chat completion: once the answer is complete (a request that fails stores
 * nothing), the exchange is kept as a chat-window conversation marked as from the API (`source: 'api'`).
 * The request's system and developer turns become its system prompt; its user, assistant (content and
 * tool calls) and tool turns (with the id of the call each answers) its messages; the answer (content,
 * tool calls, reasoning, finish reason, who served it) the last one. Its title is the first user message's.
 */
import type { ChatMessageData, ChatToolCall } from '../../common/conversation.js';
import { newMessage, titleOf, type ConversationStore } from '../chat/conversation-store.js';
import type { ReplicaGenerateResult } from '../replicas/request-dispatcher.js';
import type { ChatCompletionRequest } from './openai-schemas.js';
import { textOf } from './tool-calls-request.js';

/** An answer as the response carries it: OpenAI's message (content null when it is only calls) and finish reason. */
export interface CompletedAnswer {
  message: { content: string | null; reasoning_content?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] };
  finishReason: 'stop' | 'length' | 'tool_calls';
  result: ReplicaGenerateResult;
}

type Call = { id: string; function: { name: string; arguments: string } };

const callsOf = (calls: readonly Call[] | null | undefined): { toolCalls?: ChatToolCall[] } =>
  calls?.length ? { toolCalls: calls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })) } : {};

/** Saves the request and its answer as a new conversation. */
export async function storeCompletion(store: ConversationStore, body: ChatCompletionRequest, answer: CompletedAnswer): Promise<void> {
  const system: string[] = [];
  const messages: ChatMessageData[] = [];
  for (const turn of body.messages) {
    const content = textOf(turn.content);
    if (turn.role === 'system' || turn.role === 'developer') system.push(content);
    else if (turn.role === 'tool') messages.push(newMessage('tool', content, { toolCallId: turn.tool_call_id ?? '' }));
    else
      messages.push(newMessage(turn.role, content, { ...callsOf(turn.tool_calls), ...(turn.reasoning_content ? { reasoning: turn.reasoning_content } : {}) }));
  }
  const { result } = answer;
  messages.push(
    newMessage('assistant', answer.message.content ?? '', {
      ...callsOf(answer.message.tool_calls),
      ...(answer.message.reasoning_content ? { reasoning: answer.message.reasoning_content } : {}),
      finishReason: answer.finishReason,
      servedBy: {
        replica: result.replica,
        slot: result.globalSlot,
        reusedTokens: result.reusedTokens,
        promptTokens: result.usage.promptTokens,
        completionTokens: result.usage.completionTokens,
      },
    }),
  );
  const firstUser = messages.find((m) => m.role === 'user');
  await store.create({ title: titleOf(firstUser?.content ?? ''), systemPrompt: system.join('\n\n'), messages, source: 'api' });
}
