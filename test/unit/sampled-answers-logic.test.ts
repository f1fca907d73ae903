/**
 * Pure logic, no engine: where a rendered prompt's answers are spliced as their sampled ids
 * (engine-bin/sampled-answer-splice.ts), and the budgeted memory of sampled answers core keeps
 * (core/tokenizer/sampled-answers.ts). The real tokenizer and engine: test/integration/sampled-answers.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { spliceSampledAnswers, type AnswerAnchor, type SampledTextOf } from '../../engine-bin/sampled-answer-splice.js';
import { SampledAnswers } from '../../core/tokenizer/sampled-answers.js';

/** A vocabulary where id n is the character with code n (97 = "a"), and 0 a control token that makes no text. */
const letters: SampledTextOf = (ids) => {
  const kept = [...ids];
  while (kept.at(-1) === 0) kept.pop();
  return kept.includes(0) ? null : { text: String.fromCharCode(...kept), ids: kept };
};
const ids = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));
/** The anchor of `answer` at its `nth` occurrence in `text` (0: the first), with its own ids. */
const anchor = (text: string, answer: string, nth = 0, tokens = ids(answer)): AnswerAnchor => {
  let at = -1;
  for (let i = 0; i <= nth; i++) at = text.indexOf(answer, at + 1);
  return { at, text: answer, tokens };
};
const splice = (text: string, anchors: AnswerAnchor[]) => spliceSampledAnswers(text, anchors, letters);

describe('spliceSampledAnswers', () => {
  it('cuts the text at each anchored answer, in order, and puts the sampled ids there (trailing control tokens dropped)', () => {
    const text = '<u>hi</u><a>abc</a><u>more</u><a>de</a><u>last</u><a>';
    expect(splice(text, [anchor(text, 'abc'), anchor(text, 'de', 0, [...ids('de'), 0])])).toEqual([
      '<u>hi</u><a>',
      ids('abc'),
      '</a><u>more</u><a>',
      ids('de'),
      '</a><u>last</u><a>',
    ]);
  });

  it('splices an answer at its anchor, not where its text first appears', () => {
    // The user quoted the answer before it was given, and "a" is inside "<a>": only the anchored one counts.
    const text = '<u>say abc</u><a>abc</a>';
    expect(splice(text, [anchor(text, 'abc', 1)])).toEqual(['<u>say abc</u><a>', ids('abc'), '</a>']);
  });

  it('leaves the text whole where an anchor does not hold its answer, or falls inside an earlier answer', () => {
    const text = '<a>abcd</a>';
    expect(splice(text, [{ at: 4, text: 'abc', tokens: ids('abc') }])).toEqual([text]);
    expect(splice(text, [anchor(text, 'abcd'), anchor(text, 'cd')])).toEqual(['<a>', ids('abcd'), '</a>']);
    expect(splice(text, [])).toEqual([text]);
  });

  it('does not splice ids that make another text, or a control token inside the answer', () => {
    const text = '<a>abc</a>';
    expect(splice(text, [anchor(text, 'abc', 0, ids('abd'))])).toEqual([text]);
    expect(splice(text, [anchor(text, 'abc', 0, [97, 0, 98, 99])])).toEqual([text]);
  });
});

describe('SampledAnswers', () => {
  it('gives the ids remembered for a text, and nothing for another', () => {
    const memory = new SampledAnswers(100);
    memory.remember('one', [1, 2]);
    memory.remember('two', [3]);
    expect(memory.idsOf('two')).toEqual([3]);
    expect(memory.idsOf('one')).toEqual([1, 2]);
    expect(memory.idsOf('unknown')).toBeUndefined();
  });

  it('keeps its budget of ids, dropping the least recently used first; an answer larger than the budget is not kept', () => {
    const memory = new SampledAnswers(5);
    memory.remember('a', [1, 2]);
    memory.remember('b', [3, 4]);
    memory.idsOf('a'); // a is now more recent than b
    memory.remember('c', [5, 6]);
    expect(['a', 'b', 'c'].map((t) => memory.idsOf(t))).toEqual([[1, 2], undefined, [5, 6]]);
    memory.remember('a', [7]); // remembered again: its old ids no longer count
    memory.remember('d', [8, 9]);
    expect(['a', 'c', 'd'].map((t) => memory.idsOf(t))).toEqual([[7], [5, 6], [8, 9]]);
    memory.remember('huge', [1, 2, 3, 4, 5, 6]);
    expect(memory.idsOf('huge')).toBeUndefined();
    memory.remember('', [1]);
    memory.remember('none', []);
    expect([memory.idsOf(''), memory.idsOf('none')]).toEqual([undefined, undefined]);
  });
});
