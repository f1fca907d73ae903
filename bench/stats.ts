/** Small statistics for benchmark figures: percentiles, means, a bootstrap interval, and a fixed-width table printer. */

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const mean = (values: readonly number[]): number => (values.length ? values.reduce((s, v) => s + v, 0) / values.length : NaN);

export function formatNumber(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return '-';
  return Math.abs(value) >= 1000 ? value.toFixed(0) : value.toFixed(digits);
}

/** A plain-text table: header row, a rule, then rows; numbers formatted, columns padded. */
export function table(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = rows.map((row) => row.map((c) => (typeof c === 'number' ? formatNumber(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (row: readonly string[]) => row.map((c, i) => c.padStart(widths[i]!)).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

/** Seeded generator for workloads (mulberry32). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A bootstrap interval for the ratio of two samples' medians, `numerator`'s over `denominator`'s: each
 * sample is drawn again with replacement `rounds` times (seeded), and the interval holds the middle
 * `coverage` of the ratios so drawn. It shows how far one run's ratio could have fallen with the same
 * machine and workload: a sample split between two modes (requests that find their prefix and requests
 * that prefill a whole history) has a median that jumps between them from run to run.
 */
export function bootstrapMedianRatio(
  numerator: readonly number[],
  denominator: readonly number[],
  { rounds = 2000, coverage = 0.9, seed = 1 }: { rounds?: number; coverage?: number; seed?: number } = {},
): { low: number; high: number } {
  if (numerator.length === 0 || denominator.length === 0) return { low: NaN, high: NaN };
  const random = seeded(seed);
  const resampledMedian = (values: readonly number[]): number => percentile(Array.from({ length: values.length }, () => values[Math.floor(random() * values.length)]!), 50);
  const ratios = Array.from({ length: rounds }, () => resampledMedian(numerator) / resampledMedian(denominator));
  const tail = ((1 - coverage) / 2) * 100;
  return { low: percentile(ratios, tail), high: percentile(ratios, 100 - tail) };
}
