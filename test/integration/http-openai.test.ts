/** The OpenAI-compatible front, driven by the official `openai` client against serve-equivalent startup. */
import OpenAI from 'openai';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';
import { engineOf } from '../helpers/replica-sets.js';

type Served = Awaited<ReturnType<typeof startServed>>;
let served: Served;
let client: OpenAI;

beforeAll(async () => {
  served = await startServed({ heal: { cooldownMs: 500 } });
  client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

const metric = (text: string, name: string, replica?: number): number => {
  const family = parsePrometheusTextFormat(text).find((f) => f.name === name);
  if (!family) throw new Error(`no metric ${name}`);
  const samples = family.metrics.filter((m) => replica === undefined || m.labels?.replica === String(replica));
  return samples.reduce((sum, m) => sum + Number(m.value), 0);
};

describe('OpenAI-compatible front', () => {
  it('lists the served model', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([served.workstation.modelId]);
  });

  it('answers a chat completion, and reports the first turn as cached tokens on the second turn', async () => {
    const history: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are a test. '.repeat(30) },
      { role: 'user', content: 'hello the world' },
    ];
    const first = await client.chat.completions.create({ model: served.workstation.modelId, messages: history, max_tokens: 12, temperature: 0, seed: 1 });
    expect(first.object).toBe('chat.completion');
    expect(first.choices[0]!.finish_reason).toBe('length');
    expect(first.usage!.completion_tokens).toBe(12);
    const firstPrompt = first.usage!.prompt_tokens;
    expect(first.usage!.prompt_tokens_details!.cached_tokens).toBe(0);

    history.push({ role: 'assistant', content: first.choices[0]!.message.content ?? '' }, { role: 'user', content: 'and again' });
    const second = await client.chat.completions.create({ model: served.workstation.modelId, messages: history, max_tokens: 4, temperature: 0 });
    // The whole first prompt comes back from the replica's KV cache.
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(firstPrompt);
    expect(second.usage!.prompt_tokens).toBeGreaterThan(firstPrompt);
  });

  it('streams a chat completion as SSE with usage at the end', async () => {
    const stream = await client.chat.completions.create({
      model: served.workstation.modelId,
      messages: [{ role: 'user', content: 'write code' }],
      max_tokens: 10,
      stream: true,
      stream_options: { include_usage: true },
      // llama-server's extension, passed through by the client.
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      text += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
    expect(finish).toBe('length');
    expect(usage!.completion_tokens).toBe(10);
    expect(text.length).toBeGreaterThan(0);
  });

  it('answers completions, streaming and not, with stop strings applied', async () => {
    const plain = await client.completions.create({
      model: served.workstation.modelId,
      prompt: 'the model',
      max_tokens: 20,
      temperature: 0,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(plain.object).toBe('text_completion');
    const text = plain.choices[0]!.text;
    expect(plain.usage!.completion_tokens).toBe(20);
    const stop = text.slice(4, 6);
    const stopped = await client.completions.create({
      model: served.workstation.modelId,
      prompt: 'the model',
      max_tokens: 20,
      temperature: 0,
      stop: [stop],
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(stopped.choices[0]!.text).toBe(text.slice(0, text.indexOf(stop)));
    expect(stopped.choices[0]!.finish_reason).toBe('stop');

    const stream = await client.completions.create({
      model: served.workstation.modelId,
      prompt: 'the model',
      max_tokens: 20,
      temperature: 0,
      stream: true,
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
    expect(streamed).toBe(text);
  });

  it('sends the tokens that reach the front together as one event, with the same text and tokens as the answer sent whole', async () => {
    const request = {
      model: served.workstation.modelId,
      prompt: 'the coalesced model',
      max_tokens: 120,
      temperature: 0.8,
      seed: 7,
      ignore_eos: true,
      return_tokens: true,
    };
    const whole = (await client.completions.create(request as OpenAI.CompletionCreateParamsNonStreaming)) as OpenAI.Completion & {
      manifold: { tokens: number[] };
    };
    expect(whole.manifold.tokens).toHaveLength(120);

    const stream = await client.completions.create({ ...request, stream: true } as OpenAI.CompletionCreateParamsStreaming);
    const events: { tokens: number[]; text: string }[] = [];
    let timings: { front_ms: number | null; prompt_ms: number } | undefined;
    for await (const chunk of stream) {
      const manifold = (chunk as unknown as { manifold?: { tokens?: number[]; timings?: typeof timings } }).manifold;
      if (chunk.choices[0]?.finish_reason) {
        timings = manifold?.timings;
        continue;
      }
      events.push({ tokens: manifold?.tokens ?? [], text: chunk.choices[0]?.text ?? '' });
      if (events.length === 1) {
        // Hold the front's event loop while the engine keeps generating: the tokens it sent meanwhile reach the front in one turn.
        const until = performance.now() + 400;
        while (performance.now() < until);
      }
    }
    // (How many tokens the first event carries depends on what had arrived by then: one when one had; not asserted.)
    expect(Math.max(...events.map((e) => e.tokens.length))).toBeGreaterThan(1);
    expect(events.length).toBeLessThan(120);
    expect(events.flatMap((e) => e.tokens)).toEqual(whole.manifold.tokens);
    expect(events.map((e) => e.text).join('')).toBe(whole.choices[0]!.text);
    // The front's own share of TTFT: a part of it, measured by the server.
    expect(timings!.front_ms).toBeGreaterThanOrEqual(0);
    expect(timings!.front_ms).toBeLessThan(10_000);
  });

  it('404s an unknown model, naming the one it serves', async () => {
    const error = await client.chat.completions.create({ model: 'gpt-imaginary', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as Error).message).toContain(served.workstation.modelId);
  });

  it('frees the slot when a client aborts mid-stream', async () => {
    const predicted = () => served.workstation.replicas.replicaView().reduce((sum, r) => sum + r.completionTokens, 0);
    const before = predicted();
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      {
        model: served.workstation.modelId,
        messages: [{ role: 'user', content: 'long answer please' }],
        max_tokens: 900,
        stream: true,
        ignore_eos: true,
      } as OpenAI.ChatCompletionCreateParamsStreaming,
      { signal: controller.signal },
    );
    let chunks = 0;
    for await (const _chunk of stream) {
      if (++chunks === 5) {
        controller.abort();
        break;
      }
    }
    expect(chunks).toBe(5);
    await waitFor(async () => {
      const slots = await served.workstation.replicas.slotsView();
      return slots.every((s) => s.state === 'idle') && predicted() > before ? true : undefined;
    }, 'every slot idle after the abort');
    // Cancelled long before its 900 tokens.
    expect(predicted() - before).toBeLessThan(300);
    const activity = await Promise.all([0, 1].map((r) => engineOf(served.workstation.replicas, r).client!.activity()));
    expect(activity.every((a) => a.running_decode === 0 && a.pending_prefill === 0)).toBe(true);
  });

  it('serves /metrics that a Prometheus parser reads, with counters that move after requests', async () => {
    const before = await (await fetch(`${served.front.url}/metrics`)).text();
    await client.chat.completions.create({
      model: served.workstation.modelId,
      messages: [{ role: 'user', content: 'count me' }],
      max_tokens: 3,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const after = await (await fetch(`${served.front.url}/metrics`)).text();
    expect(metric(after, 'manifold_replica_alive')).toBe(2);
    expect(metric(after, 'manifold_slots_total')).toBe(4);
    expect(metric(after, 'manifold_requests_routed_total')).toBe(metric(before, 'manifold_requests_routed_total') + 1);
    expect(metric(after, 'manifold_tokens_predicted_total')).toBe(metric(before, 'manifold_tokens_predicted_total') + 3);
    expect(metric(after, 'manifold_prompt_tokens_total')).toBeGreaterThan(metric(before, 'manifold_prompt_tokens_total'));
    expect(metric(after, 'manifold_tokens_per_second')).toBeGreaterThan(0);
  });

  it('reports health and the global slot view', async () => {
    const health = await (await fetch(`${served.front.url}/health`)).json();
    expect(health).toMatchObject({ status: 'ok', replicas: 2, replicas_alive: 2 });
    const slots = (await (await fetch(`${served.front.url}/slots`)).json()) as { replica: number; slot: number }[];
    expect(slots.map((s) => s.slot)).toEqual([0, 1, 2, 3]);
    engineOf(served.workstation.replicas, 1).signal('SIGKILL');
    const degraded = await waitFor(async () => {
      const body = (await (await fetch(`${served.front.url}/health`)).json()) as { status: string; reasons: string[] };
      return body.status === 'degraded' ? body : undefined;
    }, 'a degraded health');
    expect(degraded.reasons[0]).toMatch(/^replica 1 is /);
    await waitFor(async () => ((await (await fetch(`${served.front.url}/health`)).json()).status === 'ok' ? true : undefined), 'the heal', 30_000);
  });
});

describe('the tokenizer process under the front', () => {
  it('a tokenizer child that hangs under a request makes it a 503 that says so; the next request is served', async () => {
    const own = await startServed({ replicas: 1 }, { tokenizerOptions: { hangTimeoutMs: 3000 } });
    const ownClient = new OpenAI({ baseURL: `${own.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    // ignore_eos: the random model may sample its end first, and the check is that two tokens come back.
    const ask = () =>
      ownClient.chat.completions.create({
        model: own.workstation.modelId,
        messages: [{ role: 'user', content: 'hello' }],
        max_tokens: 2,
        ignore_eos: true,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    // Stopped before the request is sent, the child can only answer it by being killed by the hang check.
    own.workstation.tokenizer.signal('SIGSTOP');
    const error = await ask().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('tokenizer_unavailable');
    expect((error as Error).message).toMatch(/the tokenizer process hung \(no answer for \d+ ms\) and was killed while serving this call/);
    expect((await ask()).usage!.completion_tokens).toBe(2);
    expect(own.logs.some((l) => /^\[tokenizer \d+\] exited: hung/.test(l))).toBe(true);
  }, 180_000);
});
