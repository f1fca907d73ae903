/** Pure unit tests of the engine's view of slot pressure (engine-bin/eviction-pressure.ts; no engine). */
import { describe, expect, it } from 'vitest';
import { EvictionPressure } from '../../engine-bin/eviction-pressure.js';

describe('eviction pressure', () => {
  it('is high once half of the last grants (window 4) evicted, and low again when evictions age out', () => {
    const pressure = new EvictionPressure(4);
    expect(pressure.high).toBe(false);
    pressure.note(true);
    expect(pressure.high).toBe(false);
    pressure.note(false);
    pressure.note(true);
    expect(pressure.high).toBe(true);
    pressure.note(false); // [true, false, true, false]
    expect(pressure.high).toBe(true);
    pressure.note(false); // [false, true, false, false]
    expect(pressure.high).toBe(false);
    pressure.note(true);
    pressure.note(true); // [false, false, true, true]
    expect(pressure.high).toBe(true);
    pressure.reset();
    expect(pressure.high).toBe(false);
  });

  it('stays low where slots are taken again by their own conversations', () => {
    const pressure = new EvictionPressure();
    for (let i = 0; i < 20; i++) pressure.note(i % 5 === 0);
    expect(pressure.high).toBe(false);
  });
});
