/** The rebuild barrier and the pool rules, as pure logic (fake activity readings, no engine). */
import { describe, expect, it } from 'vitest';
import type { Activity } from '../../common/engine-protocol.js';
import { rebuildChangeSchema, sizesOfPools, touchedPools } from '../../common/rebuild.js';
import { BarrierTimeoutError, waitForIdle } from '../../core/rebuild/barrier.js';
import { ExactPrefixIndex } from '../../core/router/prefix-index.js';

const activity = (a: Partial<Activity>): Activity => ({ pending_prefill: 0, running_decode: 0, undrained_replies: 0, finished: 0, re_evaluation: null, ...a });

describe('rebuild barrier (pure logic, fake activity)', () => {
  it('waits until prefill, decode and undrained replies are all zero; finished requests do not hold it', async () => {
    const readings = [activity({ pending_prefill: 1 }), activity({ running_decode: 2 }), activity({ undrained_replies: 1 }), activity({ finished: 40 })];
    let reads = 0;
    await waitForIdle(async () => readings[Math.min(reads++, readings.length - 1)]!, { timeoutMs: 5000, pollMs: 1 });
    expect(reads).toBe(4);
  });

  it('a barrier that does not come in time names what is busy, not a count', async () => {
    const error = await waitForIdle(async () => activity({ pending_prefill: 3, undrained_replies: 2, finished: 9 }), { timeoutMs: 30, pollMs: 5 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BarrierTimeoutError);
    expect((error as BarrierTimeoutError).busy).toEqual(['prefill', 'undrained replies']);
    expect((error as Error).message).toBe('the engine was still busy with prefill, undrained replies after 30 ms');
  });
});

describe('pools (pure logic)', () => {
  it('touched = what the change names; weights implies kv', () => {
    expect(touchedPools({ contextSize: 2048 })).toEqual(['kv']);
    expect(touchedPools({ slots: 4, kvType: 'q8_0' })).toEqual(['kv']);
    expect(touchedPools({ gpuLayers: 12 })).toEqual(['kv', 'weights']);
  });

  it('a rollback restores only the touched pools sizes', () => {
    const sizes = { contextSize: 1024, slots: 2, kvType: 'f16', gpuLayers: 7 } as const;
    expect(sizesOfPools(sizes, ['kv'])).toEqual({ contextSize: 1024, slots: 2, kvType: 'f16' });
    expect(sizesOfPools(sizes, ['kv', 'weights'])).toEqual(sizes);
  });

  it('a change must name something and nothing unknown', () => {
    expect(rebuildChangeSchema.safeParse({}).success).toBe(false);
    expect(rebuildChangeSchema.safeParse({ contextSize: 2048, color: 'red' }).success).toBe(false);
    expect(rebuildChangeSchema.safeParse({ slots: 0 }).success).toBe(false);
  });

  it('after a rebuild the prefix index holds the moved slots, truncated, and forgets the rest', () => {
    const index = new ExactPrefixIndex();
    index.setSlot(0, 0, [1, 2, 3, 4]);
    index.setSlot(0, 1, [9, 8]);
    index.setSlot(1, 0, [5]);
    index.remapSlots(0, [
      { from: 1, to: 0, keepBlocks: 2 },
      { from: 0, to: 2, keepBlocks: 3 },
    ]);
    expect(index.matchedBlocks(0, [9, 8])).toBe(2);
    expect(index.matchedBlocks(0, [1, 2, 3, 4])).toBe(3);
    expect(index.matchedBlocks(1, [5])).toBe(1);
    expect(index.size).toBe(6);
  });
});
