/**
 * The chat window's engine room: sends a conversation's messages through the model's chat template and
 * the router (the conversation id keeps it on the replica that holds its prefix), streams each piece of
 * the answer to listeners, records which replica and slot served it and how many prompt tokens were
 * reused, and saves the conversation after each change. One answer streams per conversation at a time.
 * An answer is saved as it streams (`streaming`, at most once a second) so a crash keeps what was
 * written; a graceful stop gives answers a grace period, then saves the ones left as `interrupted`.
 */
import { type EventPayload } from '../../common/contract.js';
import { MAX_ANSWER_VERSIONS, type AnswerVersion, type ChatMessageData, type ChatSampling, type Conversation } from '../../common/conversation.js';
import type { ChatBackend } from './chat-backend.js';
import { OpenGenerations, type DrainReport } from '../open-generations.js';
import { AnswerSaver } from './answer-saver.js';
import { ConversationError, newMessage, titleOf, type ConversationStore } from './conversation-store.js';
import { editedMessages } from '../../common/edit-message.js';
import { historyTurns } from './history-turns.js';
import { ThinkingAnswer } from './thinking-answer.js';
import type { ChatTemplateOptions } from '../../common/tokenizer-protocol.js';

/** What is kept of an answer replaced by Regenerate. */
const versionOf = (m: ChatMessageData): AnswerVersion => ({
  content: m.content,
  ...(m.reasoning !== undefined ? { reasoning: m.reasoning } : {}),
  ...(m.thinkingMs !== undefined ? { thinkingMs: m.thinkingMs } : {}),
  servedBy: m.servedBy,
  stopped: m.stopped,
  error: m.error,
});

/** An answer's time to its first token and its pace after it (as LM Studio shows them under an answer). */
export function answerTimings(sentAt: number, firstAt: number | undefined, endAt: number, tokens: number): { firstTokenMs?: number; tokensPerSecond?: number } {
  if (firstAt === undefined) return {};
  const decodeMs = endAt - firstAt;
  return { firstTokenMs: Math.round(firstAt - sentAt), ...(tokens > 1 && decodeMs > 0 ? { tokensPerSecond: ((tokens - 1) * 1000) / decodeMs } : {}) };
}

/** What a conversation's thinking setting asks of the template: off, or a reasoning effort (as the API's `reasoning_effort`). */
export function thinkingOptions(mode: ChatSampling['thinking']): ChatTemplateOptions {
  if (mode === 'default') return {};
  return mode === 'off' ? { enableThinking: false, reasoningEffort: 'none' } : { reasoningEffort: mode };
}

export class ChatService {
  private readonly streaming = new Map<string, AbortController>();
  private readonly listeners = new Set<(piece: EventPayload<'chat'>) => void>();
  private readonly open = new OpenGenerations<void>();
  private stopping = false;

  constructor(
    readonly store: ConversationStore,
    private readonly workstation: ChatBackend,
  ) {}

  onPiece(listener: (piece: EventPayload<'chat'>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds the user's message and answers it; with `json` (a schema, or null for any object) the answer is JSON. */
  async send(id: string, content: string, json?: Record<string, unknown> | null): Promise<ChatMessageData> {
    return this.answerAfter(id, json, (c) => {
      c.messages.push(newMessage('user', content));
      if (c.messages.length === 1 && c.title === 'New chat') c.title = titleOf(content);
    });
  }

  /** Replaces a user message's text, drops everything after it, and answers it again (a title made from the first message follows it). */
  async edit(id: string, messageId: string, content: string): Promise<ChatMessageData> {
    return this.answerAfter(id, undefined, (c) => {
      const first = c.messages[0];
      if (first?.id === messageId && c.title === titleOf(first.content)) c.title = titleOf(content);
      try {
        c.messages = editedMessages(c.messages, messageId, content);
      } catch (error) {
        throw new ConversationError((error as Error).message);
      }
    });
  }

  /** Drops the last answer and answers the last user message again. */
  async regenerate(id: string): Promise<ChatMessageData> {
    return this.answerAfter(id, undefined, (c, answer) => {
      let last: ChatMessageData | undefined;
      while (c.messages.at(-1)?.role === 'assistant') last ??= c.messages.pop();
      if (c.messages.length === 0) throw new ConversationError('there is no message to answer again');
      // The answer replaced is kept as a version of the new one, as LM Studio keeps them.
      if (last) answer.versions = [...(last.versions ?? []), versionOf(last)].slice(-MAX_ANSWER_VERSIONS);
    });
  }

  /** Stops the answer streaming in `id`; it is kept as far as it got. */
  stop(id: string): boolean {
    const controller = this.streaming.get(id);
    controller?.abort();
    return controller !== undefined;
  }

  /** Answers streaming now. */
  get answering(): number {
    return this.open.size;
  }

  /**
   * A graceful stop's part for the chat: no new answer starts; the ones streaming get `graceMs` (or
   * until `signal` aborts), then each one left is stopped and saved as interrupted.
   */
  drain(graceMs: number, signal?: AbortSignal): Promise<DrainReport> {
    this.stopping = true;
    return this.open.drain(graceMs, undefined, signal);
  }

  /**
   * Claims the conversation's one answer, applies `change` (the new message, or the old answer dropped)
   * and adds the answer as `streaming` in the same save, then streams the answer into it.
   */
  private async answerAfter(
    id: string,
    json: Record<string, unknown> | null | undefined,
    change: (conversation: Conversation, answer: ChatMessageData) => void,
  ): Promise<ChatMessageData> {
    if (this.stopping) throw new ConversationError('the server is shutting down; no new answer is started');
    if (this.streaming.has(id)) throw new ConversationError('an answer is still streaming in this conversation; stop it first');
    const controller = new AbortController();
    this.streaming.set(id, controller);
    const answer = newMessage('assistant', '', { state: 'streaming', writer: this.store.run });
    let history: Conversation;
    try {
      history = await this.store.update(id, (c) => {
        change(c, answer);
        c.messages.push({ ...answer });
      });
    } catch (error) {
      this.streaming.delete(id);
      throw error;
    }
    return this.answer({ ...history, messages: history.messages.filter((m) => m.id !== answer.id) }, answer, controller, json);
  }

  private async answer(
    conversation: Conversation,
    answer: ChatMessageData,
    controller: AbortController,
    json: Record<string, unknown> | null | undefined,
  ): Promise<ChatMessageData> {
    let interrupted = false;
    const untrack = this.open.add({
      cut: () => {
        interrupted = true;
        controller.abort();
      },
    });
    const saver = new AnswerSaver(this.store, conversation.id, answer, (error) =>
      this.workstation.log.warn(`chat: the answer so far was not saved (${error.message})`),
    );
    try {
      const { tokenizer } = this.workstation;
      const { temperature, topP, topK, maxTokens, seed, thinking: mode, thinkingBudget } = conversation.sampling;
      const { tokens, thinkingOpen } = await tokenizer.applyChatTemplate(historyTurns(conversation), { template: thinkingOptions(mode) });
      const tags = tokenizer.thinking;
      const thinking = tags ? new ThinkingAnswer(tags, thinkingOpen === true) : null;
      const budget =
        tags?.end && thinkingBudget !== null && mode !== 'off'
          ? { tokens: thinkingBudget, start: tags.start, end: tags.end, open: thinkingOpen === true }
          : undefined;
      const grammar = json === undefined ? undefined : await this.workstation.tokenizer.jsonSchemaGrammar(json);
      const sentAt = performance.now();
      let firstAt: number | undefined;
      const done = await this.workstation.generate(
        {
          tokens,
          ...(grammar === undefined ? {} : { grammar }),
          conversationId: conversation.id,
          sampling: { temperature, topP, topK, minP: 0.05, repeatPenalty: 1, repeatLastN: 64, ...(seed === null ? {} : { seed }) },
          maxTokens,
          ...(thinking ? { preservedTokens: [...tokenizer.preservedTokens] } : {}),
          ...(budget ? { thinkingBudget: budget } : {}),
        },
        {
          signal: controller.signal,
          onTokens: (chunk) => {
            firstAt ??= performance.now();
            if (!chunk.text) return;
            const parts = thinking ? thinking.push(chunk.text) : [{ type: 'content' as const, text: chunk.text }];
            for (const { type, text } of parts) {
              if (type === 'reasoning') answer.reasoning = (answer.reasoning ?? '') + text;
              else answer.content += text;
              for (const listener of this.listeners)
                listener({ conversationId: conversation.id, messageId: answer.id, text, part: type === 'reasoning' ? 'reasoning' : 'content' });
            }
            if (thinking) answer.thinkingMs = thinking.thinkingMs();
            saver.grew();
          },
        },
      );
      if (thinking) Object.assign(answer, thinking.finish(done.text));
      else answer.content = done.text;
      answer.stopped = controller.signal.aborted && !interrupted;
      answer.servedBy = {
        replica: done.replica,
        slot: done.globalSlot,
        reusedTokens: done.reusedTokens,
        promptTokens: done.usage.promptTokens,
        completionTokens: done.usage.completionTokens,
        ...answerTimings(sentAt, firstAt, performance.now(), done.usage.completionTokens),
      };
    } catch (error) {
      if (controller.signal.aborted) answer.stopped = !interrupted;
      else answer.error = (error as Error).message;
    } finally {
      this.streaming.delete(conversation.id);
    }
    answer.state = interrupted ? 'interrupted' : 'complete';
    answer.writer = null;
    try {
      await saver.finish();
    } finally {
      untrack();
    }
    return answer;
  }
}
