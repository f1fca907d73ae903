/**
 * The chat window's engine room: sends a conversation's messages through the model's chat template and
 * the router (the conversation id keeps it on the replica that holds its prefix), streams each piece of
 * the answer to listeners, records which replica and slot served it and how many prompt tokens were
 * reused, and saves the conversation after each change. One answer streams per conversation at a time.
 */
import { randomUUID } from 'node:crypto';
import type { ChatMessageData, Conversation, EventPayload } from '../../../common/contract.js';
import type { Workstation } from '../workstation.js';
import { ConversationError, type ConversationStore } from './conversation-store.js';

const TITLE_CHARS = 48;

export class ChatService {
  private readonly streaming = new Map<string, AbortController>();
  private readonly listeners = new Set<(piece: EventPayload<'chat'>) => void>();

  constructor(
    readonly store: ConversationStore,
    private readonly workstation: Workstation,
  ) {}

  onPiece(listener: (piece: EventPayload<'chat'>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds the user's message and answers it. */
  async send(id: string, content: string): Promise<ChatMessageData> {
    return this.answerAfter(id, (c) => {
      c.messages.push({ id: randomUUID(), role: 'user', content, servedBy: null, stopped: false, error: null });
      if (c.messages.length === 1 && c.title === 'New chat') c.title = content.replace(/\s+/g, ' ').trim().slice(0, TITLE_CHARS) || 'New chat';
    });
  }

  /** Drops the last answer and answers the last user message again. */
  async regenerate(id: string): Promise<ChatMessageData> {
    return this.answerAfter(id, (c) => {
      while (c.messages.at(-1)?.role === 'assistant') c.messages.pop();
      if (c.messages.length === 0) throw new ConversationError('there is no message to answer again');
    });
  }

  /** Stops the answer streaming in `id`; it is kept as far as it got. */
  stop(id: string): boolean {
    const controller = this.streaming.get(id);
    controller?.abort();
    return controller !== undefined;
  }

  /**
   * Claims the conversation's one answer, applies `change` (the new message, or the old answer dropped),
   * streams the answer to the conversation as it is then, and adds it to the conversation as it is after.
   */
  private async answerAfter(id: string, change: (conversation: Conversation) => void): Promise<ChatMessageData> {
    if (this.streaming.has(id)) throw new ConversationError('an answer is still streaming in this conversation; stop it first');
    const controller = new AbortController();
    this.streaming.set(id, controller);
    let conversation: Conversation;
    try {
      conversation = await this.store.update(id, change);
    } catch (error) {
      this.streaming.delete(id);
      throw error;
    }
    return this.answer(conversation, controller);
  }

  private async answer(conversation: Conversation, controller: AbortController): Promise<ChatMessageData> {
    const answer: ChatMessageData = { id: randomUUID(), role: 'assistant', content: '', servedBy: null, stopped: false, error: null };
    try {
      const history = conversation.messages.filter((m) => m.error === null).map((m) => ({ role: m.role, content: m.content }));
      const { tokens } = await this.workstation.tokenizer.applyChatTemplate([{ role: 'system', content: conversation.systemPrompt }, ...history]);
      const { temperature, topP, topK, maxTokens, seed } = conversation.sampling;
      const done = await this.workstation.generate(
        {
          tokens,
          conversationId: conversation.id,
          sampling: { temperature, topP, topK, minP: 0.05, repeatPenalty: 1, repeatLastN: 64, ...(seed === null ? {} : { seed }) },
          maxTokens,
        },
        {
          signal: controller.signal,
          onTokens: (chunk) => {
            if (!chunk.text) return;
            answer.content += chunk.text;
            for (const listener of this.listeners) listener({ conversationId: conversation.id, messageId: answer.id, text: chunk.text });
          },
        },
      );
      answer.content = done.text;
      answer.stopped = controller.signal.aborted;
      answer.servedBy = { replica: done.replica, slot: done.globalSlot, reusedTokens: done.reusedTokens, promptTokens: done.usage.promptTokens, completionTokens: done.usage.completionTokens };
    } catch (error) {
      if (controller.signal.aborted) answer.stopped = true;
      else answer.error = (error as Error).message;
    } finally {
      this.streaming.delete(conversation.id);
    }
    await this.store.update(conversation.id, (c) => void c.messages.push(answer));
    return answer;
  }
}
