/**
 * The chat window's prompt turns from a conversation's history: the system prompt first, failed
 * messages left out, and a stored API conversation's tool calls and tool results written as plain
 * Hermes turns (no `tool` role, no tool_calls left for the template to render).
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessageData } from '../../common/conversation.js';
import { historyTurns } from '../../core/chat/history-turns.js';

const message = (fields: Partial<ChatMessageData> & Pick<ChatMessageData, 'role' | 'content'>): ChatMessageData => ({
  id: 'm',
  servedBy: null,
  stopped: false,
  error: null,
  state: 'complete',
  writer: null,
  ...fields,
});

describe('historyTurns', () => {
  it('renders tool calls and results as text turns after the system prompt, without failed answers', () => {
    const turns = historyTurns({
      systemPrompt: 'be brief',
      messages: [
        message({ role: 'user', content: 'weather?' }),
        message({ role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] }),
        message({ role: 'tool', content: '{"t":21}', toolCallId: 'call_1' }),
        message({ role: 'assistant', content: 'It is 21.' }),
        message({ role: 'user', content: 'and?' }),
        message({ role: 'assistant', content: 'half', error: 'the replica died' }),
      ],
    });
    expect(turns).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>' },
      { role: 'user', content: '<tool_response>\n{"t":21}\n</tool_response>' },
      { role: 'assistant', content: 'It is 21.' },
      { role: 'user', content: 'and?' },
    ]);
  });
});
