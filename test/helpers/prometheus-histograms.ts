/**
 * Test helper: a labelled histogram's series read out of Prometheus text format. parse-prometheus-text-format
 * (used for everything else) folds every series of a histogram into one and drops the `_count` and `_sum`
 * that carry labels, so each series is read here from its `_bucket`, `_sum` and `_count` lines.
 */

export interface HistogramSeries {
  count: number;
  sum: number;
  /** Cumulative count per upper bound, by `le` as written (`+Inf` last). */
  buckets: Record<string, number>;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The series of histogram `name` whose labels (besides `le`) include `labels`, or undefined when there is none. */
export function histogramSeries(text: string, name: string, labels: Record<string, string>): HistogramSeries | undefined {
  let series: HistogramSeries | undefined;
  for (const line of text.split('\n')) {
    const match = SAMPLE_LINE.exec(line);
    if (!match) continue;
    const [, sampleName, labelText = '', valueText] = match;
    const sampleLabels = Object.fromEntries([...labelText.matchAll(LABEL)].map((m) => [m[1]!, m[2]!]));
    if (!Object.entries(labels).every(([k, v]) => sampleLabels[k] === v)) continue;
    const value = Number(valueText);
    if (sampleName === `${name}_bucket`) (series ??= { count: 0, sum: 0, buckets: {} }).buckets[sampleLabels.le!] = value;
    else if (sampleName === `${name}_count`) (series ??= { count: 0, sum: 0, buckets: {} }).count = value;
    else if (sampleName === `${name}_sum`) (series ??= { count: 0, sum: 0, buckets: {} }).sum = value;
  }
  return series;
}
