/** The seeded chat script of the chat benchmarks: same seed, same chat; sizes as asked; a fair turn order. */
import { describe, expect, it } from 'vitest';
import { chatScript, nextSpeaker } from '../../bench/chat-script.js';
import { seeded } from '../../bench/stats.js';

const options = { conversations: 6, rounds: 5, systemWords: 30, openingWords: 200, followUpWords: 50, seed: 11 };
const wordCount = (text: string): number => text.split(' ').length;

describe('chatScript', () => {
  it('gives the same script for the same seed and another for another seed', () => {
    expect(chatScript(options)).toEqual(chatScript(options));
    const other = chatScript({ ...options, seed: 12 });
    expect(other.conversations[0]!.userMessages[0]).not.toBe(chatScript(options).conversations[0]!.userMessages[0]);
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

  it('refuses a script with no conversations or no rounds, naming the field', () => {
    expect(() => chatScript({ ...options, conversations: 0 })).toThrow(/conversations must be a whole number ≥ 1 \(got 0\)/);
    expect(() => chatScript({ ...options, rounds: 2.5 })).toThrow(/rounds must be/);
  });
});

describe('nextSpeaker', () => {
  it('draws only a conversation with rounds left that is not waiting for an answer, and -1 when none can speak', () => {
    const random = seeded(5);
    for (let draw = 0; draw < 200; draw++) expect([1, 3]).toContain(nextSpeaker([2, 4, 0, 1], new Set([0]), random));
    expect(nextSpeaker([0, 2], new Set([1]), random)).toBe(-1);
    expect(nextSpeaker([0, 0], new Set(), random)).toBe(-1);
    expect(nextSpeaker([], new Set(), random)).toBe(-1);
    // The edges of the draw: the first ticket and the last.
    expect(nextSpeaker([0, 2, 3], new Set(), () => 0)).toBe(1);
    expect(nextSpeaker([0, 2, 3], new Set(), () => 0.999_999)).toBe(2);
  });

  it('gives the same draws for the same seed', () => {
    const draws = (seed: number) => {
      const random = seeded(seed);
      return Array.from({ length: 20 }, () => nextSpeaker([5, 5, 5, 5], new Set(), random));
    };
    expect(draws(3)).toEqual(draws(3));
    expect(draws(4)).not.toEqual(draws(3));
  });

  it('weighs each conversation that can speak by its rounds left, as a ticket drawn from those remaining', () => {
    const random = seeded(9);
    const counts = [0, 0, 0];
    for (let draw = 0; draw < 8000; draw++) counts[nextSpeaker([1, 3, 4], new Set([2]), random)]!++;
    expect(counts[2]).toBe(0);
    expect(counts[1]! / 8000).toBeGreaterThan(0.72);
    expect(counts[1]! / 8000).toBeLessThan(0.78);
  });

  it('does not favour the conversation that just got its answer: it speaks next about as often as any other that can', () => {
    // 16 conversations × 5 rounds, 8 in flight, answers of random length, as in the chat benchmark.
    const random = seeded(21);
    const roundsLeft = Array.from({ length: 16 }, () => 5);
    const busy = new Set<number>();
    const ends: { at: number; conversation: number }[] = [];
    let continued = 0;
    let drawsAfterAnAnswer = 0;
    let idleAtThoseDraws = 0;
    const speak = (now: number, justAnswered?: number): void => {
      while (busy.size < 8) {
        const conversation = nextSpeaker(roundsLeft, busy, random);
        if (conversation < 0) return;
        if (justAnswered !== undefined) {
          drawsAfterAnAnswer++;
          idleAtThoseDraws += roundsLeft.filter((rounds, c) => rounds > 0 && !busy.has(c)).length;
          if (conversation === justAnswered) continued++;
          justAnswered = undefined;
        }
        roundsLeft[conversation]!--;
        busy.add(conversation);
        ends.push({ at: now + 0.5 + random() * 2, conversation });
      }
    };
    speak(0);
    while (ends.length > 0) {
      ends.sort((a, b) => a.at - b.at);
      const { at, conversation } = ends.shift()!;
      busy.delete(conversation);
      speak(at, conversation);
    }
    expect(roundsLeft.every((rounds) => rounds === 0)).toBe(true);
    // By chance alone: one in the number that could speak (about 1 in 8 here); a fixed shuffle served first-free-first gave ~43%.
    expect(continued / drawsAfterAnAnswer).toBeLessThan(2 * (drawsAfterAnAnswer / idleAtThoseDraws));
  });
});
