/**
 * The benchmarks' bootstrap intervals, for a ratio of medians and for one sample's median: they hold the
 * figure of samples made around a known one, they are seeded, and they are wide where a sample splits
 * between two modes near half and half (round-robin's TTFTs under slot pressure) and narrow where the
 * samples are tight.
 */
import { describe, expect, it } from 'vitest';
import { bootstrapMedian, bootstrapMedianRatio, seeded } from '../../bench/stats.js';

/** `n` values around `centre`, spread ±`spread` (seeded). */
function around(centre: number, spread: number, n: number, seed: number): number[] {
  const random = seeded(seed);
  return Array.from({ length: n }, () => centre + (random() * 2 - 1) * spread);
}

describe('bootstrap interval of a ratio of medians', () => {
  it('holds the ratio of two samples a known factor apart, narrowly when both are tight', () => {
    const base = around(400, 20, 80, 1);
    const { low, high } = bootstrapMedianRatio(
      base.map((x) => x * 2),
      base,
    );
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

describe('bootstrap interval of a median', () => {
  it('holds the median of a tight sample, narrowly, and narrower with more of it', () => {
    const few = bootstrapMedian(around(0.99, 0.1, 24, 8));
    const many = bootstrapMedian(around(0.99, 0.1, 240, 9));
    for (const { low, high } of [few, many]) {
      expect(low).toBeLessThanOrEqual(0.99 + 0.02);
      expect(high).toBeGreaterThanOrEqual(0.99 - 0.02);
    }
    expect(many.high - many.low).toBeLessThan(few.high - few.low);
    expect(many.high - many.low).toBeLessThan(0.04);
  });

  it('is wide when the sample splits between two modes near half and half', () => {
    const { low, high } = bootstrapMedian([...around(1, 0.05, 40, 10), ...around(3, 0.05, 40, 11)]);
    expect(low).toBeLessThan(1.1);
    expect(high).toBeGreaterThan(2.9);
  });

  it('is not a number without samples', () => {
    expect(bootstrapMedian([])).toEqual({ low: NaN, high: NaN });
  });
});
