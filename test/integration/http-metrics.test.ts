/**
 * `/metrics` after real requests: two replicas serve streamed and plain chat completions (more at once
 * than they have slots, so some wait in the queue) through the `openai` client; the scrape, in standard
 * text format, has per replica as many time-to-first-token, time-per-output-token, queue-wait and
 * route-decision observations as that replica served requests, and the token counters the answers'
 * usage adds up to (llama-server's meaning: processed prompt tokens apart from cached ones).
 */
import OpenAI from 'openai';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeAll, describe, expect, it } from 'vitest';
import { histogramSeries } from '../helpers/prometheus-histograms.js';
import { startServed } from '../helpers/served.js';

type Served = Awaited<ReturnType<typeof startServed>>;
let served: Served;
let client: OpenAI;

beforeAll(async () => {
  served = await startServed({ replicas: 2, engine: { contextSize: 1024, slots: 2, threads: 1 } });
  client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

interface Answer {
  replica: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  ms: number;
}

/** The `manifold` extension of an answer: the replica that served it. */
const replicaOf = (body: object): number => (body as { manifold: { replica: number } }).manifold.replica;

async function ask(i: number, maxTokens: number): Promise<Answer> {
  const started = performance.now();
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: `question ${i}: ${'tell me more about the model. '.repeat(i + 1)}` }];
  const params = { model: served.workstation.modelId, messages, max_tokens: maxTokens, ignore_eos: true, temperature: 0 };
  if (i % 2 === 0) {
    const answer = await client.chat.completions.create(params as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const usage = answer.usage!;
    return {
      replica: replicaOf(answer),
      promptTokens: usage.prompt_tokens,
      cachedTokens: usage.prompt_tokens_details!.cached_tokens!,
      completionTokens: usage.completion_tokens,
      ms: performance.now() - started,
    };
  }
  const stream = await client.chat.completions.create({
    ...params,
    stream: true,
    stream_options: { include_usage: true },
  } as OpenAI.ChatCompletionCreateParamsStreaming);
  let replica = -1;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    if ('manifold' in chunk) replica = replicaOf(chunk);
    usage = chunk.usage ?? usage;
  }
  return {
    replica,
    promptTokens: usage!.prompt_tokens,
    cachedTokens: usage!.prompt_tokens_details!.cached_tokens!,
    completionTokens: usage!.completion_tokens,
    ms: performance.now() - started,
  };
}

describe('/metrics after real requests', () => {
  it('counts, per replica, one observation of each histogram per request served and the tokens its answers report', async () => {
    // Six at once on four slots: two wait in the queue (answers long enough that all six arrive first); then two more, one at a time.
    const answers = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => ask(i, 60 + i)));
    for (const i of [6, 7]) answers.push(await ask(i, 8));

    const text = await (await fetch(`${served.front.url}/metrics`)).text();
    const families = parsePrometheusTextFormat(text);
    const counter = (name: string, replica: number): number =>
      Number(families.find((f) => f.name === name)!.metrics.find((m) => m.labels?.replica === String(replica))!.value);
    const type = (name: string): string | undefined => families.find((f) => f.name === name)?.type;
    for (const name of [
      'manifold_time_to_first_token_seconds',
      'manifold_time_per_output_token_seconds',
      'manifold_queue_wait_seconds',
      'manifold_route_decision_seconds',
    ]) {
      expect(type(name)).toBe('HISTOGRAM');
    }

    for (const replica of [0, 1]) {
      const mine = answers.filter((a) => a.replica === replica);
      // Four slots for six requests at once: both replicas served some.
      expect(mine.length).toBeGreaterThan(0);
      const histogram = (name: string) => histogramSeries(text, name, { replica: String(replica) })!;
      for (const name of [
        'manifold_time_to_first_token_seconds',
        'manifold_time_per_output_token_seconds',
        'manifold_queue_wait_seconds',
        'manifold_route_decision_seconds',
      ]) {
        const series = histogram(name);
        expect(series.count, `${name}{replica="${replica}"}`).toBe(mine.length);
        expect(series.buckets['+Inf']).toBe(mine.length);
      }
      expect(counter('manifold_requests_routed_total', replica)).toBe(mine.length);
      // Each first token came within its request's own time, seen from the client.
      const ttft = histogram('manifold_time_to_first_token_seconds');
      expect(ttft.sum).toBeGreaterThan(0);
      expect(ttft.sum).toBeLessThanOrEqual(mine.reduce((sum, a) => sum + a.ms, 0) / 1000);
      expect(histogram('manifold_time_per_output_token_seconds').sum).toBeGreaterThan(0);
      expect(histogram('manifold_route_decision_seconds').sum).toBeLessThan(mine.length * 0.1);

      expect(counter('manifold_tokens_predicted_total', replica)).toBe(mine.reduce((sum, a) => sum + a.completionTokens, 0));
      expect(counter('manifold_prompt_tokens_cached_total', replica)).toBe(mine.reduce((sum, a) => sum + a.cachedTokens, 0));
      expect(counter('manifold_cache_hit_tokens_total', replica)).toBe(counter('manifold_prompt_tokens_cached_total', replica));
      expect(counter('manifold_prompt_tokens_total', replica)).toBe(mine.reduce((sum, a) => sum + a.promptTokens - a.cachedTokens, 0));
      expect(counter('manifold_prompt_seconds_total', replica)).toBeGreaterThan(0);
      expect(counter('manifold_tokens_predicted_seconds_total', replica)).toBeGreaterThan(0);
      // Its slots keep what they served: part of its KV cache is in use.
      const kv = counter('manifold_kv_cache_usage_ratio', replica);
      expect(kv).toBeGreaterThan(0);
      expect(kv).toBeLessThanOrEqual(1);
      expect(counter('manifold_requests_processing', replica)).toBe(0);
    }
    // The six at once on four slots: some waited for a slot (longer than the smallest bucket).
    const waited = [0, 1].map((replica) => histogramSeries(text, 'manifold_queue_wait_seconds', { replica: String(replica) })!);
    expect(waited.reduce((sum, s) => sum + s.count - s.buckets['0.005']!, 0)).toBeGreaterThan(0);
    expect(Number(families.find((f) => f.name === 'manifold_requests_deferred')!.metrics[0]!.value)).toBe(0);
  });
});
