/**
 * The benchmarks' bootstrap interval for a ratio of medians: it holds the ratio of two samples a known
 * factor apart, it is seeded, and it is wide where a sample splits between two modes near half and half
 * (round-robin's TTFTs under slot pressure) and narrow where both samples are tight.
 */
import { describe, expect, it } from 'vitest';
import { bootstrapMedianRatio, seeded } from '../../bench/stats.js';

/** `n` values around `centre`, spread ±`spread` (seeded). */
function around(centre: number, spread: number, n: number, seed: number): number[] {
  const random = seeded(seed);
  return Array.from({ length: n }, () => centre + (random() * 2 - 1) * spread);
}

describe('bootstrap interval of a ratio of medians', () => {
  it('holds the ratio of two samples a known factor apart, narrowly when both are tight', () => {
    const base = around(400, 20, 80, 1);
    const { low, high } = bootstrapMedianRatio(base.map((x) => x * 2), base);
    expect(low).toBeLessThanOrEqual(2);
    expect(high).toBeGreaterThanOrEqual(2);
    expect(high / low).toBeLessThan(1.15);
  });

  it('is wide when the numerator splits between two modes near half and half', () => {
    const prefix = around(450, 30, 80, 2);
    const roundRobin = [...around(500, 50, 38, 3), ...around(1300, 100, 42, 4)];
    const { low, high } = bootstrapMedianRatio(roundRobin, prefix);
    expect(low).toBeLessThan(1.5);
    expect(high).toBeGreaterThan(2.5);
  });

  it('gives the same interval for the same seed and another for another seed', () => {
    const prefix = around(450, 30, 80, 5);
    const roundRobin = [...around(500, 50, 40, 6), ...around(1300, 100, 40, 7)];
    const first = bootstrapMedianRatio(roundRobin, prefix, { seed: 3 });
    expect(bootstrapMedianRatio(roundRobin, prefix, { seed: 3 })).toEqual(first);
    expect(bootstrapMedianRatio(roundRobin, prefix, { seed: 4 })).not.toEqual(first);
  });

  it('is not a number without samples', () => {
    expect(bootstrapMedianRatio([], [1, 2])).toEqual({ low: NaN, high: NaN });
  });
});
