/** The oracle line: the prompt tokens any cache could have reused, from what was sent before. */
import { describe, expect, it } from 'vitest';
import { commonPrefixLength, oracleShare, reusableTokens } from '../../bench/oracle.js';

describe('commonPrefixLength', () => {
  it('matches across the concatenated parts and stops at the first difference', () => {
    expect(commonPrefixLength([1, 2, 3, 4, 5], [1, 2], [3, 9])).toBe(3);
    expect(commonPrefixLength([1, 2, 3], [1, 2, 3, 4])).toBe(3);
    expect(commonPrefixLength([1, 2, 3], [], [1, 2], [3])).toBe(3);
    expect(commonPrefixLength([7], [1])).toBe(0);
    expect(commonPrefixLength([], [1])).toBe(0);
  });
});

describe('reusableTokens', () => {
  it('reuses the previous prompt and the answer as sampled within a conversation', () => {
    const sent = [
      { conversation: 0, prompt: [1, 2, 3], answer: [10, 11] },
      { conversation: 0, prompt: [1, 2, 3, 10, 11, 4, 5], answer: [12] },
    ];
    expect(reusableTokens(sent)).toEqual([0, 5]);
  });

  it('stops at the first answer token the history re-tokenized differently', () => {
    const sent = [
      { conversation: 0, prompt: [1, 2, 3], answer: [10, 11, 12] },
      { conversation: 0, prompt: [1, 2, 3, 10, 99, 4], answer: [] },
    ];
    expect(reusableTokens(sent)).toEqual([0, 4]);
  });

  it("reaches other conversations' prompts (a shared system prompt) but not their answers", () => {
    const sent = [
      { conversation: 0, prompt: [1, 2, 3, 4], answer: [5, 6] },
      { conversation: 1, prompt: [1, 2, 3, 4, 5, 6, 7], answer: [] },
    ];
    expect(reusableTokens(sent)).toEqual([0, 4]);
  });

  it('counts only what was sent before, in the order sent', () => {
    const sent = [
      { conversation: 1, prompt: [1, 2, 8, 8], answer: [] },
      { conversation: 0, prompt: [1, 2, 3, 4], answer: [] },
    ];
    expect(reusableTokens(sent)).toEqual([0, 2]);
  });

  it('never counts the last prompt token, which an engine always evaluates again', () => {
    const sent = [
      { conversation: 0, prompt: [1, 2, 3], answer: [4] },
      { conversation: 0, prompt: [1, 2, 3], answer: [] },
      { conversation: 0, prompt: [1, 2, 3, 4], answer: [] },
    ];
    expect(reusableTokens(sent)).toEqual([0, 2, 3]);
  });
});

describe('oracleShare', () => {
  it('is the reusable tokens over all prompt tokens', () => {
    const sent = [
      { conversation: 0, prompt: [1, 2, 3, 4], answer: [5, 6] },
      { conversation: 0, prompt: [1, 2, 3, 4, 5, 6, 7, 8], answer: [] },
    ];
    expect(oracleShare(sent)).toBeCloseTo(6 / 12);
    expect(oracleShare([])).toBe(0);
  });
});
