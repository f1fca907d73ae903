/** Slot choice rules, as pure logic. */
import { describe, expect, it } from 'vitest';
import { chooseSlot, commonPrefixLength } from '../../engine-bin/slot-choice.js';

const slot = (index: number, tokens: number[], lastUsed: number, idle = true) => ({ index, tokens, lastUsed, idle });

describe('slot choice', () => {
  it('measures the common prefix', () => {
    expect(commonPrefixLength([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(commonPrefixLength([], [1])).toBe(0);
    expect(commonPrefixLength([1, 2], [1, 2, 3])).toBe(2);
  });

  it('takes the idle slot with the longest common prefix', () => {
    const choice = chooseSlot([slot(0, [1, 2], 5), slot(1, [1, 2, 3, 4], 9), slot(2, [7], 1)], [1, 2, 3, 9]);
    expect(choice).toEqual({ index: 1, commonPrefix: 3 });
  });

  it('skips busy slots even when they hold the longest prefix', () => {
    expect(chooseSlot([slot(0, [1, 2, 3], 5, false), slot(1, [1], 9)], [1, 2, 3])).toEqual({ index: 1, commonPrefix: 1 });
  });

  it('falls back to the least recently used idle slot when none shares a prefix', () => {
    expect(chooseSlot([slot(0, [5], 30), slot(1, [6], 10), slot(2, [7], 20)], [1, 2])).toEqual({ index: 1, commonPrefix: 0 });
    // A never-used slot (lastUsed 0) is the least recently used.
    expect(chooseSlot([slot(0, [5], 30), slot(1, [], 0)], [1])).toEqual({ index: 1, commonPrefix: 0 });
  });

  it('returns null when every slot is busy', () => {
    expect(chooseSlot([slot(0, [], 0, false)], [1])).toBeNull();
  });
});
