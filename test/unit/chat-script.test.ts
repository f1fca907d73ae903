/** The seeded chat script of the chat benchmarks: same seed, same chat; sizes as asked; a fair turn order. */
import { describe, expect, it } from 'vitest';
import { chatScript, nextTicket } from '../../bench/chat-script.js';

const options = { conversations: 6, rounds: 5, systemWords: 30, openingWords: 200, followUpWords: 50, seed: 11 };
const wordCount = (text: string): number => text.split(' ').length;

describe('chatScript', () => {
  it('gives the same script for the same seed and another for another seed', () => {
    expect(chatScript(options)).toEqual(chatScript(options));
    const other = chatScript({ ...options, seed: 12 });
    expect(other.conversations[0]!.userMessages[0]).not.toBe(chatScript(options).conversations[0]!.userMessages[0]);
    expect(other.order).not.toEqual(chatScript(options).order);
  });

  it('writes one shared system prompt, a long opening and shorter follow-ups per conversation', () => {
    const script = chatScript(options);
    expect(script.conversations).toHaveLength(6);
    for (const conversation of script.conversations) {
      expect(conversation.system).toBe(script.conversations[0]!.system);
      expect(wordCount(conversation.system)).toBe(30);
      expect(conversation.userMessages.map(wordCount)).toEqual([200, 50, 50, 50, 50]);
    }
    const openings = new Set(script.conversations.map((c) => c.userMessages[0]));
    expect(openings.size).toBe(6);
  });

  it('orders every conversation exactly `rounds` times, interleaved rather than in blocks', () => {
    const { order } = chatScript(options);
    expect(order).toHaveLength(30);
    for (let c = 0; c < 6; c++) expect(order.filter((x) => x === c)).toHaveLength(5);
    expect(order).not.toEqual([...order].sort((a, b) => a - b));
    // Not round after round in a fixed rotation either.
    expect(order.slice(0, 6)).not.toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('refuses a script with no conversations or no rounds, naming the field', () => {
    expect(() => chatScript({ ...options, conversations: 0 })).toThrow(/conversations must be a whole number ≥ 1 \(got 0\)/);
    expect(() => chatScript({ ...options, rounds: 2.5 })).toThrow(/rounds must be/);
  });
});

describe('nextTicket', () => {
  it('takes the first ticket whose conversation is not waiting for an answer', () => {
    expect(nextTicket([3, 1, 3, 2], new Set())).toBe(0);
    expect(nextTicket([3, 1, 3, 2], new Set([3]))).toBe(1);
    expect(nextTicket([3, 1, 3, 2], new Set([3, 1]))).toBe(3);
    expect(nextTicket([3, 3], new Set([3]))).toBe(-1);
    expect(nextTicket([], new Set())).toBe(-1);
  });
});
