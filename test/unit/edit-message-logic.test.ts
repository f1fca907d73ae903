/** Edit-and-resend's truncation (pure logic): up to the edited user message, its new text, nothing after; answers are not editable. */
import { describe, expect, it } from 'vitest';
import type { ChatMessageData } from '../../common/conversation.js';
import { editedMessages } from '../../common/edit-message.js';

const message = (id: string, role: 'user' | 'assistant', content: string): ChatMessageData => ({
  id,
  role,
  content,
  servedBy: null,
  stopped: false,
  error: null,
  state: 'complete',
  writer: null,
});
const conversation = [
  message('u1', 'user', 'first'),
  message('a1', 'assistant', 'one'),
  message('u2', 'user', 'second'),
  message('a2', 'assistant', 'two'),
  message('u3', 'user', 'third'),
  message('a3', 'assistant', 'three'),
];

describe('editedMessages', () => {
  it('keeps what came before the edited message, gives it the new text, and drops everything after it', () => {
    const edited = editedMessages(conversation, 'u2', 'second, reworded');
    expect(edited.map((m) => [m.id, m.content])).toEqual([
      ['u1', 'first'],
      ['a1', 'one'],
      ['u2', 'second, reworded'],
    ]);
    expect(editedMessages(conversation, 'u1', 'again').map((m) => m.id)).toEqual(['u1']);
    expect(editedMessages(conversation, 'u3', 'last').map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2', 'u3']);
    // The conversation given is not changed.
    expect(conversation).toHaveLength(6);
  });

  it('clears an error the old message carried', () => {
    const failed = [{ ...message('u1', 'user', 'x'), error: 'no replica' }];
    expect(editedMessages(failed, 'u1', 'y')[0]).toMatchObject({ content: 'y', error: null });
  });

  it('refuses an answer or an unknown message, naming the field', () => {
    expect(() => editedMessages(conversation, 'a1', 'x')).toThrow(/^messageId: message a1 is an answer/);
    expect(() => editedMessages(conversation, 'nope', 'x')).toThrow(/^messageId: there is no message nope/);
  });
});
