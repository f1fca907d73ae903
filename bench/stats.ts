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

export interface BootstrapOptions {
  rounds?: number;
  coverage?: number;
  seed?: number;
}

/**
 * The middle `coverage` of `rounds` statistics, each computed from every sample drawn again with replacement
 * (seeded): how far one run's figure could have fallen with the same machine and workload.
 */
function bootstrapInterval(
  samples: readonly (readonly number[])[],
  statistic: (medians: number[]) => number,
  { rounds = 2000, coverage = 0.9, seed = 1 }: BootstrapOptions,
): { low: number; high: number } {
  if (samples.some((values) => values.length === 0)) return { low: NaN, high: NaN };
  const random = seeded(seed);
  const resampledMedian = (values: readonly number[]): number =>
    percentile(
      Array.from({ length: values.length }, () => values[Math.floor(random() * values.length)]!),
      50,
    );
  const figures = Array.from({ length: rounds }, () => statistic(samples.map(resampledMedian)));
  const tail = ((1 - coverage) / 2) * 100;
  return { low: percentile(figures, tail), high: percentile(figures, 100 - tail) };
}

/**
 * A bootstrap interval for the ratio of two samples' medians, `numerator`'s over `denominator`'s (each
 * sample drawn again on its own). A sample split between two modes (requests that find their prefix and
 * requests that prefill a whole history) has a median that jumps between them from run to run.
 */
export const bootstrapMedianRatio = (
  numerator: readonly number[],
  denominator: readonly number[],
  options: BootstrapOptions = {},
): { low: number; high: number } => bootstrapInterval([numerator, denominator], ([n, d]) => n! / d!, options);

/**
 * A bootstrap interval for one sample's median: for paired figures (each HTTP run over the in-process run
 * beside it), where each pair already cancels what the machine was doing at that moment.
 */
export const bootstrapMedian = (values: readonly number[], options: BootstrapOptions = {}): { low: number; high: number } =>
  bootstrapInterval([values], ([m]) => m!, options);
