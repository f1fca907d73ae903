/** Pure unit tests of the slot core pins a request to on a llama-server child that lends slot files (no engines). */
import { describe, expect, it } from 'vitest';
import { slotToPin } from '../../core/replicas/slot-pin.js';

const free = (slot: number, sharedTokens: number, lastUsed?: number) => ({ slot, sharedTokens, lastUsed });

describe('the slot core pins a llama-server request to', () => {
  it('takes the free slot sharing most of the prompt when that is more than a tenth of it, as llama-server would', () => {
    expect(slotToPin([free(0, 64, 1), free(1, 640, 9), free(2, 128, 0)], 1000)).toBe(1);
    // 100 of 1000 is not more than the threshold: least recently used instead.
    expect(slotToPin([free(0, 100, 5), free(1, 0, 2)], 1000)).toBe(1);
  });

  it('else takes the least recently used free slot: one never used first, then the lower number', () => {
    expect(slotToPin([free(0, 0, 5), free(1, 0, 3), free(2, 0, 4)], 500)).toBe(1);
    expect(slotToPin([free(0, 0, 5), free(3, 0), free(2, 0)], 500)).toBe(3);
    expect(slotToPin([free(1, 0, 7), free(0, 0, 7)], 500)).toBe(1);
  });

  it('gives none when no slot is free', () => {
    expect(slotToPin([], 500)).toBeNull();
  });
});
