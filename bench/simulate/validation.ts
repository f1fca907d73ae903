/**
 * The simulator checked against real engines: the first requests of the Mooncake trace, each 512-token block
 * scaled down to one 64-token block of filler tokens (equal ids, equal tokens: the trace's sharing is kept),
 * prompts cut to `maxBlocks` blocks and answers to `maxAnswer` tokens, replayed on real node-llama-cpp
 * replicas of the bench model here and, with the same arrivals, on SIMULATED engines whose performance model
 * is fitted to those replicas first (a prompt's prefill, decode steps with one and two sequences).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Served } from '../../core/serve.js';
import { withServed } from '../served-replicas.js';
import { percentile, seeded } from '../stats.js';
import type { PerformanceModel } from './simulated-engine.js';
import { simulate } from './simulation.js';
import { mooncake, type SimRequest } from './workloads.js';
import { BLOCK_TOKENS } from '../../core/router/block-hash.js';

export interface ValidationOptions {
  model: string;
  requests: number;
  replicas: number;
  slots: number;
  maxBlocks: number;
  maxAnswer: number;
  /** The replay's arrivals: one every this many ms on average (the trace's own spacing, rescaled). */
  meanGapMs: number;
}

/** Filler tokens of one 64-token block named `id`: the same id, the same tokens; two ids, two blocks that differ from their first token. */
const blockTokens = (id: number): number[] => {
  const random = seeded(id + 1);
  return Array.from({ length: BLOCK_TOKENS }, () => 300 + Math.floor(random() * 300));
};

/** The first trace requests at the bench model's scale: one 64-token block per 512-token block of the trace. */
function scaledRequests(options: ValidationOptions): (SimRequest & { tokens: number[] })[] {
  const trace = mooncake(1, options.requests);
  const span = trace.at(-1)!.arrivalMs - trace[0]!.arrivalMs || 1;
  const scale = (options.meanGapMs * trace.length) / span;
  return trace.map((r) => {
    // The trace's blocks are 8 ids per 512-token block: every 8th id names one here.
    const blocks = r.blocks.filter((_, i) => i % 8 === 0).slice(0, options.maxBlocks);
    const tokens = blocks.flatMap(blockTokens);
    return {
      ...r,
      arrivalMs: r.arrivalMs * scale,
      blocks,
      tokens,
      promptTokens: tokens.length,
      outputTokens: Math.max(1, Math.min(options.maxAnswer, Math.round(r.outputTokens / 8))),
    };
  });
}

/** Prefill and decode of the served replicas, fitted to `stepMs = a + b × prefill + c × decoders`. */
async function fit(served: Served, options: ValidationOptions): Promise<PerformanceModel> {
  const set = served.workstation.replicas;
  const prompt = (n: number, seed: number) => Array.from({ length: n }, (_, i) => 300 + ((seed * 17 + i * 11) % 300));
  // Long prefills on every replica at once, as the replay runs them (the replicas and the front share this machine's
  // cores), three rounds of fresh prompts: the median.
  const longs = [];
  for (const round of [1, 2, 3])
    longs.push(
      ...(await Promise.all(
        Array.from({ length: options.replicas }, (_, k) => set.generate({ tokens: prompt(1024, 10 * round + k), maxTokens: 1, ignoreEos: true })),
      )),
    );
  const long = longs.sort((x, y) => x.timings.prefillMs - y.timings.prefillMs)[Math.floor(longs.length / 2)]!;
  const short = await set.generate({ tokens: prompt(64, 2), maxTokens: 1, ignoreEos: true });
  const b = (long.timings.prefillMs - short.timings.prefillMs) / (long.timings.prefillTokens - short.timings.prefillTokens);
  const a = Math.max(0.1, short.timings.prefillMs - b * short.timings.prefillTokens);
  const one = await set.generate({ tokens: prompt(64, 3), maxTokens: 48, ignoreEos: true });
  const oneStep = one.timings.decodeMs / (one.usage.completionTokens - 1);
  // Two sequences on one replica (the set routes two fresh prompts to its two least busy slots: one replica when it has two).
  const pair = await Promise.all([4, 5].map((seed) => set.generate({ tokens: prompt(64, seed), maxTokens: 48, ignoreEos: true })));
  const sameReplica = pair[0]!.replica === pair[1]!.replica;
  const twoStep = sameReplica ? Math.max(...pair.map((p) => p.timings.decodeMs / (p.usage.completionTokens - 1))) : oneStep;
  const c = Math.max(0, twoStep - oneStep);
  const base = Math.max(0.1, oneStep - c);
  return {
    name: `bench model here (fitted: ${base.toFixed(1)} ms + ${b.toFixed(3)} ms/prefilled token + ${c.toFixed(1)} ms/sequence)`,
    slots: options.slots,
    // The engine's batch (node-llama-cpp's 512 tokens), filled oldest prompt first (engine-bin/model-context.ts).
    chunkTokens: 512,
    prefillOrder: 'oldest',
    stepMs: (prefill, decoders) => (prefill > 0 ? a + b * prefill : 0) + (decoders > 0 ? base + c * decoders : 0),
    restoreMsPerToken: { ram: 0.004, disk: 0.02 },
    kvBytesPerToken: 8192,
    ramBytes: 512 * 2 ** 20,
    diskBytes: 2 * 2 ** 30,
  };
}

export interface ValidationResult {
  model: string;
  real: { hit: number; ttftP50Ms: number; ttftP90Ms: number };
  simulated: { hit: number; ttftP50Ms: number; ttftP90Ms: number };
}

export async function validate(options: ValidationOptions): Promise<ValidationResult> {
  const requests = scaledRequests(options);
  return withServed(
    {
      model: options.model,
      replicas: options.replicas,
      routing: 'prefix',
      engine: { slots: options.slots, contextSize: options.maxBlocks * BLOCK_TOKENS + options.maxAnswer + 64, threads: 1 },
    },
    async (_target, served) => {
      const model = await fit(served, options);
      const set = served.workstation.replicas;
      const ttft: number[] = [];
      let reused = 0;
      let prompted = 0;
      const started = performance.now();
      await Promise.all(
        requests.map(async (r) => {
          await delay(Math.max(0, r.arrivalMs - (performance.now() - started)));
          const sent = performance.now();
          let first: number | undefined;
          const result = await set.generate(
            { tokens: r.tokens, conversationId: r.session, maxTokens: r.outputTokens, ignoreEos: true, sampling: { temperature: 0 } },
            { onTokens: () => (first ??= performance.now()) },
          );
          ttft.push((first ?? performance.now()) - sent);
          reused += result.reusedTokens;
          prompted += r.tokens.length;
        }),
      );
      const sim = simulate({ requests, replicas: options.replicas, model, policy: 'prefix', speedup: 1 });
      return {
        model: model.name,
        real: { hit: reused / prompted, ttftP50Ms: percentile(ttft, 50), ttftP90Ms: percentile(ttft, 90) },
        simulated: { hit: sim.hit, ttftP50Ms: sim.ttftP50Ms, ttftP90Ms: sim.ttftP90Ms },
      };
    },
  );
}
