/**
 * The core-held queue through the HTTP front: one replica with one slot, so a second request waits in core;
 * a full queue answers 429 with Retry-After in OpenAI's error shape, a request that waits past
 * `queue.timeoutMs` gets a 503 naming the bound, and /metrics counts both and the waits.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/engines.js';
import { histogramSeries } from '../helpers/prometheus-histograms.js';
import { startServed } from '../helpers/served.js';

type Served = Awaited<ReturnType<typeof startServed>>;

const longAnswer = { prompt: 'hello', max_tokens: 1000, ignore_eos: true, temperature: 0 };

function post(served: Served, body: unknown): Promise<Response> {
  return fetch(`${served.front.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

const metric = (text: string, name: string, labels: Record<string, string> = {}): number =>
  parsePrometheusTextFormat(text)
    .find((f) => f.name === name)!
    .metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((sum, m) => sum + Number(m.value), 0);

describe('the request queue over HTTP', () => {
  it('queues a request while the only slot is busy, refuses one more with 429 and Retry-After, and times a waiter out with a clear 503', async () => {
    const served = await startServed({ replicas: 1, engine: { contextSize: 1024, slots: 1, threads: 1 }, queue: { maxWaiting: 1, timeoutMs: 400 } });
    const busy = post(served, longAnswer);
    await waitFor(() => (served.workstation.replicas.replicaView()[0]!.running === 1 ? true : undefined), 'the slot to be taken');
    const waiting = post(served, { prompt: 'second', max_tokens: 2 });
    await waitFor(() => (served.workstation.replicas.waiting === 1 ? true : undefined), 'the second request to wait in the queue');

    const refused = await post(served, { prompt: 'third', max_tokens: 2 });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as { error: { message: string; code: string; type: string } };
    expect(body.error.code).toBe('rate_limit_exceeded');
    expect(body.error.message).toMatch(/1 requests are already waiting.*queue\.maxWaiting/);

    // The first answer takes longer than the queue's 0.4 s bound: the waiter is refused, not started.
    const timedOut = await waiting;
    expect(timedOut.status).toBe(503);
    expect(timedOut.headers.get('retry-after')).not.toBeNull();
    const timeoutBody = (await timedOut.json()) as { error: { message: string; code: string } };
    expect(timeoutBody.error).toMatchObject({ code: 'queue_timeout' });
    expect(timeoutBody.error.message).toContain('400 ms (queue.timeoutMs)');
    expect((await busy).status).toBe(200);

    const metrics = await (await fetch(`${served.front.url}/metrics`)).text();
    expect(metric(metrics, 'manifold_queue_rejected_total', { reason: 'full' })).toBe(1);
    expect(metric(metrics, 'manifold_queue_rejected_total', { reason: 'timeout' })).toBe(1);
    expect(metric(metrics, 'manifold_queue_waiting')).toBe(0);
  });

  it('streams open only once a replica takes the request, and a waiting stream is served when the slot frees', async () => {
    const served = await startServed({ replicas: 1, engine: { contextSize: 1024, slots: 1, threads: 1 } });
    const first = post(served, { ...longAnswer, max_tokens: 60 });
    await waitFor(() => (served.workstation.replicas.replicaView()[0]!.running === 1 ? true : undefined), 'the slot to be taken');
    const second = await post(served, { prompt: 'queued', max_tokens: 3, ignore_eos: true, stream: true });
    // Headers come when the request is bound, so by now the first has finished and freed the slot.
    expect(second.status).toBe(200);
    expect((await first).status).toBe(200);
    const text = await second.text();
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    const metrics = await (await fetch(`${served.front.url}/metrics`)).text();
    expect(parsePrometheusTextFormat(metrics).find((f) => f.name === 'manifold_queue_wait_seconds')!.type).toBe('HISTOGRAM');
    const histogram = histogramSeries(metrics, 'manifold_queue_wait_seconds', { replica: '0' })!;
    expect(histogram.count).toBeGreaterThanOrEqual(2);
    expect(histogram.buckets['+Inf']).toBe(histogram.count);
    // The queued stream waited for the first answer, longer than the smallest bucket.
    expect(histogram.buckets['0.005']).toBeLessThan(histogram.count);
  });
});
