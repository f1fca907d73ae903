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
    const choice = chooseSlot([slot(0, [1, 2], 5), slot(1, [1, 2, 3, 4], 9), slot(2, [7], 1)], [1, 2, 3, 4, 9]);
    expect(choice).toEqual({ index: 1, commonPrefix: 4 });
    // A conversation's own slot (its whole history is the prompt's start) wins over an empty one.
    expect(chooseSlot([slot(0, [], 0), slot(1, [1, 2, 3], 9)], [1, 2, 3, 4])).toEqual({ index: 1, commonPrefix: 3 });
  });

  it('does not overwrite another conversation for a short shared part while an empty slot is idle', () => {
    // Slot 1 holds a conversation that shares only the system prompt [1, 2] with the new prompt.
    const other = slot(1, [1, 2, 50, 51, 52, 53], 9);
    expect(chooseSlot([slot(0, [], 0), other], [1, 2, 60])).toEqual({ index: 0, commonPrefix: 0 });
    // Without an empty slot, the slot that loses least for what it shares.
    expect(chooseSlot([slot(0, [1, 2, 70, 71], 3), other], [1, 2, 60])).toEqual({ index: 0, commonPrefix: 2 });
    // A continuation that drops a little of its slot (a re-tokenized answer) still takes it over an empty slot.
    expect(chooseSlot([slot(0, [], 0), slot(1, [1, 2, 3, 4, 5, 99], 9)], [1, 2, 3, 4, 5, 6])).toEqual({ index: 1, commonPrefix: 5 });
    // Sharing most of its start is still another conversation while an empty slot is idle.
    expect(chooseSlot([slot(0, [], 0), slot(1, [1, 2, 3, 8, 9], 9)], [1, 2, 3, 4])).toEqual({ index: 0, commonPrefix: 0 });
  });

  it('takes the slot that last served the same conversation even when its answer re-tokenized differently', () => {
    // The slot holds prompt [1..5] + sampled answer [90..97]; the next turn's prompt carries the answer re-tokenized as [80, 81].
    const own = { ...slot(1, [1, 2, 3, 4, 5, 90, 91, 92, 93, 94, 95, 96, 97], 9), conversationId: 'c1' };
    const next = [1, 2, 3, 4, 5, 80, 81, 6];
    expect(chooseSlot([slot(0, [], 0), own], next, 'c1')).toEqual({ index: 1, commonPrefix: 5 });
    // Another conversation (or none named) does not claim it over the empty slot.
    expect(chooseSlot([slot(0, [], 0), own], next, 'c2')).toEqual({ index: 0, commonPrefix: 0 });
    expect(chooseSlot([slot(0, [], 0), own], next)).toEqual({ index: 0, commonPrefix: 0 });
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
