/**
 * Pure logic, no engine: where a rendered prompt's answers are spliced as their sampled ids
 * (engine-bin/sampled-answer-splice.ts), and the budgeted memory of sampled answers core keeps
 * (electron/core/tokenizer/sampled-answers.ts). The real tokenizer and engine: test/integration/sampled-answers.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { spliceSampledAnswers, type SampledText } from '../../engine-bin/sampled-answer-splice.js';
import { SampledAnswers } from '../../electron/core/tokenizer/sampled-answers.js';

/** A vocabulary where id n is the letter at n (97 = "a"), and 0 a control token that makes no text. */
const letters: SampledText = (ids) => {
  const kept = [...ids];
  while (kept.at(-1) === 0) kept.pop();
  return kept.includes(0) ? null : { text: String.fromCharCode(...kept), ids: kept };
};
const ids = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

describe('spliceSampledAnswers', () => {
  it('cuts the text around each answer it holds, in order, and puts the sampled ids there', () => {
    const text = '<u>hi</u><a>abc</a><u>more</u><a>de</a><u>last</u><a>';
    expect(spliceSampledAnswers(text, [{ text: 'abc', tokens: ids('abc') }, { text: 'de', tokens: [...ids('de'), 0] }], letters)).toEqual([
      '<u>hi</u><a>',
      ids('abc'),
      '</a><u>more</u><a>',
      ids('de'),
      '</a><u>last</u><a>',
    ]);
  });

  it('leaves the text whole where no answer is found after the previous one', () => {
    const text = '<a>de</a><a>abc</a>';
    // "de" comes before "abc" in the text, so after "abc" is found there is no "de" left to find.
    expect(spliceSampledAnswers(text, [{ text: 'abc', tokens: ids('abc') }, { text: 'de', tokens: ids('de') }], letters)).toEqual(['<a>de</a><a>', ids('abc'), '</a>']);
    expect(spliceSampledAnswers(text, [{ text: 'xyz', tokens: ids('xyz') }], letters)).toEqual([text]);
    expect(spliceSampledAnswers(text, [], letters)).toEqual([text]);
  });

  it('does not splice ids that make another text, or a control token inside the answer', () => {
    const text = '<a>abc</a>';
    expect(spliceSampledAnswers(text, [{ text: 'abc', tokens: ids('abd') }], letters)).toEqual([text]);
    expect(spliceSampledAnswers(text, [{ text: 'abc', tokens: [97, 0, 98, 99] }], letters)).toEqual([text]);
  });
});

describe('SampledAnswers', () => {
  it('finds remembered answers in the order asked, skipping the others', () => {
    const memory = new SampledAnswers(100);
    memory.remember('one', [1, 2]);
    memory.remember('two', [3]);
    expect(memory.find(['two', 'unknown', 'one'])).toEqual([
      { text: 'two', tokens: [3] },
      { text: 'one', tokens: [1, 2] },
    ]);
  });

  it('keeps its budget of ids, dropping the least recently used first; an answer larger than the budget is not kept', () => {
    const memory = new SampledAnswers(5);
    memory.remember('a', [1, 2]);
    memory.remember('b', [3, 4]);
    memory.find(['a']); // a is now more recent than b
    memory.remember('c', [5, 6]);
    expect(memory.find(['a', 'b', 'c']).map((f) => f.text)).toEqual(['a', 'c']);
    memory.remember('a', [7]); // remembered again: its old ids no longer count
    memory.remember('d', [8, 9]);
    expect(memory.find(['a', 'c', 'd']).map((f) => f.tokens)).toEqual([[7], [5, 6], [8, 9]]);
    memory.remember('huge', [1, 2, 3, 4, 5, 6]);
    expect(memory.find(['huge'])).toEqual([]);
    memory.remember('', [1]);
    memory.remember('none', []);
    expect(memory.find(['', 'none'])).toEqual([]);
  });
});
