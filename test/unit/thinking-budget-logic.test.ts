/** The thinking budget's count (pure logic): when the end tag is due, and when the answer is left alone. */
import { describe, expect, it } from 'vitest';
import { ThinkingBudget } from '../../engine-bin/thinking-budget.js';

const spec = { start: '<think>', end: '</think>' };
const spendAll = (budget: ThinkingBudget, pieces: string[]): number => pieces.findIndex((piece) => budget.spend(piece));

describe('ThinkingBudget', () => {
  it('counts the tokens of a thinking the prompt opened and calls for the end tag at the budget', () => {
    expect(spendAll(new ThinkingBudget({ ...spec, tokens: 3, open: true }), ['a', ' b', ' c', ' d', ' e'])).toBe(2);
  });

  it('starts counting once the answer opens its thinking first thing', () => {
    expect(spendAll(new ThinkingBudget({ ...spec, tokens: 2, open: false }), ['\n', '<think>', 'a', ' b', ' c'])).toBe(3);
  });

  it('leaves alone an answer that closes its thinking itself, or does not think', () => {
    expect(spendAll(new ThinkingBudget({ ...spec, tokens: 3, open: true }), ['a', '</think>', 'x', 'y', 'z'])).toBe(-1);
    expect(spendAll(new ThinkingBudget({ ...spec, tokens: 1, open: false }), ['Hello', '<think>', 'a', 'b'])).toBe(-1);
  });

  it('calls for the end tag before any token with a budget of 0 in an opened thinking', () => {
    expect(new ThinkingBudget({ ...spec, tokens: 0, open: true }).dueAtOnce()).toBe(true);
    expect(new ThinkingBudget({ ...spec, tokens: 0, open: false }).dueAtOnce()).toBe(false);
    expect(spendAll(new ThinkingBudget({ ...spec, tokens: 0, open: false }), ['<think>', 'a'])).toBe(0);
  });
});
