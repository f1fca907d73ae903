/**
 * Pure unit tests of the request metrics (no engines): what a served request adds (time to first token
 * and per output token from core's clock, prompt tokens processed apart from cached ones, llama-server
 * style), the dispatcher's bindings, series that start at zero and stay when a model is replaced, and a
 * registry per workstation, read back through a Prometheus text parser.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { observeServed, RequestMetrics, type ServedRequest } from '../../core/metrics/request-metrics.js';
import { histogramSeries } from '../helpers/prometheus-histograms.js';

const served = (replica: number, promptTokens: number, reusedTokens: number, completionTokens: number): ServedRequest => ({
  replica,
  reusedTokens,
  usage: { promptTokens, completionTokens },
  timings: { queuedMs: 0, prefillMs: 250, decodeMs: 1500, prefillTokens: promptTokens - reusedTokens, decodeTokensPerSecond: 0 },
});

/** A counter's value, or undefined when the replica has no series. */
async function scrape(metrics: RequestMetrics) {
  const text = await metrics.registry.metrics();
  const families = parsePrometheusTextFormat(text);
  return {
    counter: (name: string, replica: string): number | undefined => {
      const sample = families.find((f) => f.name === name)?.metrics.find((m) => m.labels?.replica === replica);
      return sample === undefined ? undefined : Number(sample.value);
    },
    histogram: (name: string, replica: string) => histogramSeries(text, name, { replica }),
  };
}

describe('one served request', () => {
  it('times the first token from the start and the rest per token after it', () => {
    const o = observeServed(served(1, 100, 60, 11), 1000, 1400, 2400);
    expect(o).toEqual({
      replica: 1,
      timeToFirstTokenS: 0.4,
      timePerOutputTokenS: 0.1,
      promptTokensProcessed: 40,
      promptTokensCached: 60,
      promptSeconds: 0.25,
      tokensPredicted: 11,
      predictedSeconds: 1.5,
    });
  });

  it('has no time to first token without a token, and no time per token with fewer than two', () => {
    expect(observeServed(served(0, 10, 0, 0), 0, null, 50)).toMatchObject({ timeToFirstTokenS: null, timePerOutputTokenS: null, tokensPredicted: 0 });
    expect(observeServed(served(0, 10, 0, 1), 0, 20, 50)).toMatchObject({ timeToFirstTokenS: 0.02, timePerOutputTokenS: null });
  });
});

describe('request metrics', () => {
  it('counts bindings and served requests by replica, each histogram once per event', async () => {
    let now = 0;
    const metrics = new RequestMetrics(() => now);
    metrics.zeroSeries([0, 1]);
    metrics.bound(1, { queuedMs: 30, routeMs: 0.02 });
    const timer = metrics.startRequest();
    now = 100;
    timer.tokens({ tokens: [], text: '' });
    now = 300;
    timer.tokens({ tokens: [5], text: 'a' });
    now = 700;
    timer.tokens({ tokens: [6], text: 'b' });
    timer.served(served(1, 50, 20, 3));

    const { counter, histogram } = await scrape(metrics);
    // Replica 0 served nothing, but its series are there, at zero.
    expect(histogram('manifold_time_to_first_token_seconds', '0')).toMatchObject({ count: 0, sum: 0 });
    expect(counter('manifold_requests_routed_total', '0')).toBe(0);
    // Replica 1: one binding, one served request; the empty chunk did not count as the first token.
    expect(counter('manifold_requests_routed_total', '1')).toBe(1);
    const waits = histogram('manifold_queue_wait_seconds', '1')!;
    expect(waits).toMatchObject({ count: 1, sum: 0.03 });
    expect([waits.buckets['0.025'], waits.buckets['0.05'], waits.buckets['+Inf']]).toEqual([0, 1, 1]);
    expect(histogram('manifold_route_decision_seconds', '1')).toMatchObject({ count: 1, sum: 0.00002 });
    expect(histogram('manifold_time_to_first_token_seconds', '1')).toMatchObject({ count: 1, sum: 0.3 });
    expect(histogram('manifold_time_per_output_token_seconds', '1')).toMatchObject({ count: 1, sum: 0.2 });
    expect(counter('manifold_prompt_tokens_total', '1')).toBe(30);
    expect(counter('manifold_prompt_tokens_cached_total', '1')).toBe(20);
    expect(counter('manifold_cache_hit_tokens_total', '1')).toBe(20);
    expect(counter('manifold_tokens_predicted_total', '1')).toBe(3);
    expect(counter('manifold_prompt_seconds_total', '1')).toBe(0.25);
    expect(counter('manifold_tokens_predicted_seconds_total', '1')).toBe(1.5);
  });

  it("keeps a replica's counts when its series are started again (a model replaced), and starts a new replica's", async () => {
    const metrics = new RequestMetrics();
    metrics.zeroSeries([0]);
    metrics.bound(0, { queuedMs: 1, routeMs: 0.01 });
    metrics.zeroSeries([0, 1, 2]);
    const { counter, histogram } = await scrape(metrics);
    expect(histogram('manifold_queue_wait_seconds', '0')!.count).toBe(1);
    expect(counter('manifold_requests_routed_total', '0')).toBe(1);
    expect(histogram('manifold_queue_wait_seconds', '2')!.count).toBe(0);
  });

  it('keeps a registry per workstation: two in one process count apart', async () => {
    const a = new RequestMetrics();
    const b = new RequestMetrics();
    a.bound(0, { queuedMs: 1, routeMs: 0.01 });
    expect((await scrape(a)).counter('manifold_requests_routed_total', '0')).toBe(1);
    expect((await scrape(b)).counter('manifold_requests_routed_total', '0')).toBeUndefined();
  });
});
