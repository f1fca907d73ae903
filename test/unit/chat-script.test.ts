/** The seeded chat script of the chat benchmarks: same seed, same chat; sizes as asked; a fair turn order. */
import { describe, expect, it } from 'vitest';
import { chatScript, TurnTaking } from '../../bench/chat-script.js';
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

describe('TurnTaking', () => {
  it('gives each conversation its rounds in order, never one that is waiting for an answer, and finishes when all are answered', () => {
    const turns = new TurnTaking(3, 4, seeded(5));
    const spoken = new Map<number, number[]>();
    const waiting: number[] = [];
    for (let step = 0; !turns.finished; step++) {
      expect(step).toBeLessThan(100);
      // At most 2 in flight; when none can be given, answer the oldest waiting turn.
      const next = waiting.length < 2 ? turns.next() : null;
      if (next === null) {
        turns.answered(waiting.shift()!);
        continue;
      }
      expect(waiting).not.toContain(next.conversation);
      spoken.set(next.conversation, [...(spoken.get(next.conversation) ?? []), next.round]);
      waiting.push(next.conversation);
    }
    expect([...spoken.keys()].sort()).toEqual([0, 1, 2, 3]);
    for (const rounds of spoken.values()) expect(rounds).toEqual([0, 1, 2]);
    expect(turns.next()).toBeNull();
  });

  it('has no turn to give while every conversation with rounds left is waiting', () => {
    const turns = new TurnTaking(1, 2, seeded(1));
    const first = turns.next()!;
    const second = turns.next()!;
    expect(new Set([first.conversation, second.conversation])).toEqual(new Set([0, 1]));
    expect(turns.next()).toBeNull();
    expect(turns.finished).toBe(false);
    turns.answered(first.conversation);
    // Its one round is spoken: still nothing to give.
    expect(turns.next()).toBeNull();
    turns.answered(second.conversation);
    expect(turns.finished).toBe(true);
  });

  it('gives the same order for the same seed', () => {
    const order = (seed: number) => {
      const turns = new TurnTaking(5, 4, seeded(seed));
      const out: number[] = [];
      for (let next = turns.next(); next !== null; next = turns.next()) {
        out.push(next.conversation);
        turns.answered(next.conversation);
      }
      return out;
    };
    expect(order(3)).toHaveLength(20);
    expect(order(3)).toEqual(order(3));
    expect(order(4)).not.toEqual(order(3));
  });

  it('weighs each conversation that can speak by its rounds left, as a ticket drawn from those remaining', () => {
    const seededRandom = seeded(9);
    let second = 0;
    const trials = 6000;
    for (let trial = 0; trial < trials; trial++) {
      // The first two draws take the first ticket: conversation 0 speaks twice, leaving it 2 rounds to 1's 4.
      let calls = 0;
      const turns = new TurnTaking(4, 2, () => (calls++ < 2 ? 0 : seededRandom()));
      for (let k = 0; k < 2; k++) turns.answered(turns.next()!.conversation);
      expect([turns.roundsLeftOf(0), turns.roundsLeftOf(1)]).toEqual([2, 4]);
      if (turns.next()!.conversation === 1) second++;
    }
    // 4 tickets of 6.
    expect(second / trials).toBeGreaterThan(0.63);
    expect(second / trials).toBeLessThan(0.7);
  });

  it('does not favour the conversation that just got its answer: it speaks next about as often as any other that can', () => {
    // 16 conversations × 5 rounds, 8 in flight, answers of random length, as in the chat benchmark.
    const random = seeded(21);
    const turns = new TurnTaking(5, 16, random);
    const ends: { at: number; conversation: number }[] = [];
    let continued = 0;
    let drawsAfterAnAnswer = 0;
    let couldSpeakAtThoseDraws = 0;
    const speak = (now: number, justAnswered?: number): void => {
      while (ends.length < 8) {
        const couldSpeak = Array.from({ length: 16 }, (_, c) => c).filter((c) => turns.roundsLeftOf(c) > 0 && !ends.some((e) => e.conversation === c)).length;
        const next = turns.next();
        if (next === null) return;
        if (justAnswered !== undefined) {
          drawsAfterAnAnswer++;
          couldSpeakAtThoseDraws += couldSpeak;
          if (next.conversation === justAnswered) continued++;
          justAnswered = undefined;
        }
        ends.push({ at: now + 0.5 + random() * 2, conversation: next.conversation });
      }
    };
    speak(0);
    while (ends.length > 0) {
      ends.sort((a, b) => a.at - b.at);
      const { at, conversation } = ends.shift()!;
      turns.answered(conversation);
      speak(at, conversation);
    }
    expect(turns.finished).toBe(true);
    // By chance alone: one in the number that could speak (about 1 in 8 here); a fixed shuffle served first-free-first gave ~43%.
    const chance = drawsAfterAnAnswer / couldSpeakAtThoseDraws;
    expect(continued / drawsAfterAnAnswer).toBeLessThan(2 * chance);
    expect(continued / drawsAfterAnAnswer).toBeGreaterThan(0.5 * chance);
  });
});
