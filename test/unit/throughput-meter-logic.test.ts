/**
 * The dashboard's tokens/s (pure logic, a scripted clock): during a steady stream each whole second's
 * figure matches the tokens the engines produced in it within 5%, a burst shows at its real rate, and the
 * figure falls to 0 once generation stops; core's kept series is bounded and taken by itself.
 */
import { describe, expect, it, vi } from 'vitest';
import { SampleSeries } from '../../core/sample-series.js';
import { ThroughputMeter } from '../../core/throughput-meter.js';

describe('ThroughputMeter', () => {
  it('reads each whole second of a steady stream as the tokens produced in it (within 5%), then 0 when generation stops', () => {
    const meter = new ThroughputMeter();
    const start = 1_000_000;
    // A steady stream of 300 tokens/s in the chunks engines send (1–3 tokens every 7 ms) for 6 s.
    const produced = new Map<number, number>();
    let t = start;
    let n = 0;
    const series: { at: number; value: number }[] = [];
    let nextSample = start + 1000;
    while (t < start + 6000) {
      const tokens = 1 + (n++ % 3);
      meter.record(tokens, t);
      produced.set(Math.floor(t / 1000), (produced.get(Math.floor(t / 1000)) ?? 0) + tokens);
      t += 14 * (tokens / 3) + 0.001;
      if (t >= nextSample) {
        series.push({ at: nextSample, value: meter.lastSecond(nextSample) });
        nextSample += 1000;
      }
    }
    expect(series.length).toBeGreaterThanOrEqual(5);
    for (const { at, value } of series) {
      const truth = produced.get(Math.floor(at / 1000) - 1)!;
      expect(Math.abs(value - truth) / truth).toBeLessThanOrEqual(0.05);
      expect(value).toBeGreaterThan(200);
    }
    const total = [...produced.values()].reduce((a, b) => a + b, 0);
    // The /metrics mean over the window covers every token of the stream.
    expect(meter.tokensPerSecond(start + 6000) * 10).toBe(total);

    // Generation stops: one whole second later the figure is 0, and it stays 0.
    expect(meter.lastSecond(start + 7000)).toBe(0);
    expect(meter.lastSecond(start + 20_000)).toBe(0);
    expect(meter.tokensPerSecond(start + 20_000)).toBe(0);
  });

  it('shows a burst at its real rate, not spread over a window', () => {
    const meter = new ThroughputMeter();
    for (let i = 0; i < 500; i++) meter.record(1, 5_000_000 + i); // 500 tokens within half a second
    expect(meter.lastSecond(5_001_000)).toBe(500);
    expect(meter.lastSecond(5_002_000)).toBe(0);
  });
});

describe('SampleSeries', () => {
  it('takes a sample each interval by itself and keeps the last `capacity`', () => {
    vi.useFakeTimers();
    try {
      let n = 0;
      const series = new SampleSeries(() => n++, 5, 1000);
      vi.advanceTimersByTime(8000);
      expect(series.samples()).toEqual([3, 4, 5, 6, 7]);
      series.close();
      vi.advanceTimersByTime(5000);
      expect(series.samples()).toEqual([3, 4, 5, 6, 7]);
    } finally {
      vi.useRealTimers();
    }
  });
});
