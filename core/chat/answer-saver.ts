/**
 * Saves a streaming answer into its conversation as it grows: at most once per interval (a long answer
 * costs one write a second, not one per token) and once more at the end, so a crash loses at most the
 * last second of it. Saves go through the store's queue for that conversation: they never overlap, and
 * they land in the order they were made.
 */
import type { ChatMessageData } from '../../common/conversation.js';
import type { ConversationStore } from './conversation-store.js';

export class AnswerSaver {
  private timer: NodeJS.Timeout | undefined;
  /** When the last save was made; the answer's first save (as it started) was made just before. */
  private lastSave = Date.now();

  constructor(
    private readonly store: ConversationStore,
    private readonly conversationId: string,
    private readonly answer: ChatMessageData,
    private readonly onError: (error: Error) => void,
    private readonly intervalMs = 1000,
  ) {}

  /** The answer grew: it is saved once the interval since the last save has passed. */
  grew(): void {
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.save().catch(this.onError);
      },
      Math.max(0, this.lastSave + this.intervalMs - Date.now()),
    );
  }

  /** Saves the answer as it is now (its final form); a save still waiting is dropped. */
  async finish(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.save();
  }

  private async save(): Promise<void> {
    this.lastSave = Date.now();
    const snapshot = { ...this.answer };
    await this.store.update(this.conversationId, (c) => {
      const at = c.messages.findIndex((m) => m.id === snapshot.id);
      if (at >= 0) c.messages[at] = snapshot;
      else c.messages.push(snapshot);
    });
  }
}
