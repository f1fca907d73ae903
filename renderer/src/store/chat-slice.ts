/**
 * The chat window's state: the conversation list (damaged ones flagged), the open conversation, the
 * answer streaming in it (pieces from `chat` events), and the actions — new, open, send, stop,
 * regenerate, settings — each a contract call; core stores the conversations.
 */
import type { CallResult, EventPayload } from '../../../common/contract.js';
import type { ChatMessageData, ChatSampling, Conversation } from '../../../common/conversation.js';
import { editedMessages } from '../../../common/edit-message.js';
import { messageOf, type SliceCreator } from './slice.js';

export type ConversationSummary = CallResult<'listConversations'>[number];

export interface ChatSlice {
  conversations: ConversationSummary[];
  active: Conversation | null;
  /** The user's message being answered and the answer so far (its thinking apart), per conversation id. */
  streaming: Record<string, LiveAnswer>;
  chatError: string | null;
  loadConversations(): Promise<void>;
  /** After a (re)connect: the list and the open conversation as core has them now. */
  refreshChat(): void;
  openConversation(id: string): Promise<void>;
  newConversation(): Promise<void>;
  /** `json`: answer in JSON (of `schema`, or any object when it is null). */
  sendMessage(text: string, json?: { schema: Record<string, unknown> | null }): Promise<void>;
  stopAnswer(): Promise<void>;
  regenerate(): Promise<void>;
  /** Edit-and-resend: the user message gets `text`, what followed it goes, and it is answered again. */
  editMessage(messageId: string, text: string): Promise<void>;
  updateConversation(patch: { title?: string; systemPrompt?: string; sampling?: Partial<ChatSampling> }): Promise<void>;
  deleteConversation(id: string): Promise<void>;
  /** Pieces of streaming answers, applied together (one render for all that came within a frame). */
  applyChatEvents(pieces: readonly EventPayload<'chat'>[]): void;
}

/** An answer as it streams: its text, its thinking, and when the thinking began and ended (Date.now()). */
export interface LiveAnswer {
  userText: string;
  messageId: string | null;
  text: string;
  reasoning: string;
  thinkingFrom: number | null;
  thinkingTo: number | null;
}

export interface ShownMessage extends ChatMessageData {
  streaming: boolean;
}

/**
 * The open conversation's messages, with the one being asked and answered shown as it streams (the
 * copy core saves as it streams is replaced by the live text); an answer saved as streaming by another
 * window is shown as streaming.
 */
export function selectShownMessages(state: Pick<ChatSlice, 'active' | 'streaming'>): ShownMessage[] {
  if (!state.active) return [];
  const live = state.streaming[state.active.id];
  const shown: ShownMessage[] = state.active.messages
    .filter((m) => !(live && m.state === 'streaming'))
    .map((m) => ({ ...m, streaming: m.state === 'streaming' }));
  if (live) {
    const pending = { servedBy: null, stopped: false, error: null, writer: null } as const;
    if (live.userText && shown.at(-1)?.content !== live.userText)
      shown.push({ id: 'pending-user', role: 'user', content: live.userText, ...pending, state: 'complete', streaming: false });
    const thinking = live.reasoning ? { reasoning: live.reasoning, thinkingMs: (live.thinkingTo ?? Date.now()) - (live.thinkingFrom ?? Date.now()) } : {};
    shown.push({ id: live.messageId ?? 'pending-answer', role: 'assistant', content: live.text, ...thinking, ...pending, state: 'streaming', streaming: true });
  }
  return shown;
}

export function selectIsStreaming(state: Pick<ChatSlice, 'active' | 'streaming'>): boolean {
  return state.active !== null && state.streaming[state.active.id] !== undefined;
}

export const createChatSlice: SliceCreator<ChatSlice> = (set, get, client) => {
  const answer = async (id: string, userText: string, call: () => Promise<unknown>): Promise<void> => {
    set((s) => ({
      streaming: { ...s.streaming, [id]: { userText, messageId: null, text: '', reasoning: '', thinkingFrom: null, thinkingTo: null } },
      chatError: null,
    }));
    try {
      await call();
    } catch (error) {
      set({ chatError: messageOf(error) });
    } finally {
      // The saved conversation and the end of the live copy in one update: the question and its answer
      // never leave the screen (nor show twice) between the two.
      const saved = await Promise.all([client.call('getConversation', { id }), client.call('listConversations', {})]).catch((error: unknown) => {
        set({ chatError: messageOf(error) });
        return null;
      });
      set((s) => {
        const { [id]: _done, ...rest } = s.streaming;
        if (!saved) return { streaming: rest };
        const [conversation, conversations] = saved;
        return { streaming: rest, conversations, active: s.active?.id === id ? conversation : s.active };
      });
    }
  };
  return {
    conversations: [],
    active: null,
    streaming: {},
    chatError: null,
    loadConversations: async () => {
      try {
        set({ conversations: await client.call('listConversations', {}) });
      } catch (error) {
        set({ chatError: messageOf(error) });
      }
    },
    refreshChat: () => {
      void get().loadConversations();
      const open = get().active;
      if (open && !get().streaming[open.id]) void get().openConversation(open.id);
    },
    openConversation: async (id) => {
      try {
        set({ active: await client.call('getConversation', { id }), chatError: null });
      } catch (error) {
        // A damaged conversation is reported, never shown as an empty chat.
        set({ active: null, chatError: messageOf(error) });
      }
    },
    newConversation: async () => {
      const conversation = await client.call('createConversation', {});
      set((s) => ({
        active: conversation,
        conversations: [
          { id: conversation.id, title: conversation.title, messages: 0, updatedAt: conversation.updatedAt, source: conversation.source, damaged: null },
          ...s.conversations,
        ],
        chatError: null,
      }));
    },
    sendMessage: async (text, json) => {
      if (!get().active) await get().newConversation();
      const id = get().active!.id;
      await answer(id, text, () => client.call('sendMessage', { id, content: text, ...(json ? { json } : {}) }));
    },
    stopAnswer: async () => {
      const active = get().active;
      if (active) await client.call('stopGeneration', { id: active.id });
    },
    regenerate: async () => {
      const active = get().active;
      if (active) await answer(active.id, '', () => client.call('regenerate', { id: active.id }));
    },
    editMessage: async (messageId, text) => {
      const active = get().active;
      if (!active) return;
      try {
        set({ active: { ...active, messages: editedMessages(active.messages, messageId, text) } });
      } catch (error) {
        return set({ chatError: messageOf(error) });
      }
      await answer(active.id, text, () => client.call('editMessage', { id: active.id, messageId, content: text }));
    },
    updateConversation: async (patch) => {
      const active = get().active;
      if (!active) return;
      try {
        const updated = await client.call('updateConversation', { id: active.id, ...patch });
        set((s) => ({ active: updated, conversations: s.conversations.map((c) => (c.id === updated.id ? { ...c, title: updated.title } : c)) }));
      } catch (error) {
        set({ chatError: messageOf(error) });
      }
    },
    deleteConversation: async (id) => {
      await client.call('deleteConversation', { id });
      set((s) => ({ conversations: s.conversations.filter((c) => c.id !== id), active: s.active?.id === id ? null : s.active }));
    },
    applyChatEvents: (pieces) =>
      set((s) => {
        const streaming = { ...s.streaming };
        for (const piece of pieces) {
          const live = streaming[piece.conversationId];
          if (!live) continue;
          streaming[piece.conversationId] =
            piece.part === 'reasoning'
              ? { ...live, messageId: piece.messageId, reasoning: live.reasoning + piece.text, thinkingFrom: live.thinkingFrom ?? Date.now() }
              : {
                  ...live,
                  messageId: piece.messageId,
                  text: live.text + piece.text,
                  thinkingTo: live.thinkingTo ?? (live.thinkingFrom === null ? null : Date.now()),
                };
        }
        return { streaming };
      }),
  };
};
