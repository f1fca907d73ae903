/**
 * engine-kinds: one replica of each engine kind (`node-llama-cpp`, `llama-server`) with the same slots,
 * threads and context, on the same model and cores, given the same requests through the front (SSE,
 * the `openai` client): one request at a time (decode rate and TTFT of a lone sequence), then as many
 * at once as there are slots. Every prompt is new (no cache hits), so TTFT is prefill plus the path.
 * Run: `npx tsx bench/engine-kinds.ts [--quick]` (starts engines: one at a time on a shared machine).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { ensureTestModel } from '../build/test-model.js';
import { CALIBRATED_KINDS as ENGINE_KINDS, type CalibratedKind as EngineKind } from '../core/config/engine-calibration.js';
import { withServed } from './served-replicas.js';
import { mean, percentile, table } from './stats.js';
import { streamRequest, type RequestResult } from './workload.js';

export interface EngineKindsOptions {
  model: string;
  slots: number;
  threads: number;
  contextSize: number;
  promptTokens: number;
  answerTokens: number;
  /** Rounds of each phase (a lone request per round, then `slots` at once). */
  rounds: number;
}

const promptOf = (length: number, seed: number): number[] => Array.from({ length }, (_, i) => 300 + ((i * 13 + seed * 101) % 300));

async function measureKind(kind: EngineKind, options: EngineKindsOptions) {
  const engine = { kind, slots: options.slots, threads: options.threads, contextSize: options.contextSize };
  return withServed({ model: options.model, replicas: 1, engine }, async (target) => {
    const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench', maxRetries: 0 });
    const ask = (seed: number): Promise<RequestResult> =>
      streamRequest(client, target.model, { kind: 'completion', prompt: promptOf(options.promptTokens, seed) }, options.answerTokens, seed);
    await ask(9999); // warm-up, not counted
    const lone: RequestResult[] = [];
    for (let round = 0; round < options.rounds; round++) lone.push(await ask(round));
    const together: RequestResult[] = [];
    let wallMs = 0;
    let completion = 0;
    for (let round = 0; round < options.rounds; round++) {
      const started = performance.now();
      const batch = await Promise.all(Array.from({ length: options.slots }, (_, i) => ask(1000 + round * options.slots + i)));
      wallMs += performance.now() - started;
      completion += batch.reduce((s, r) => s + r.completionTokens, 0);
      together.push(...batch);
    }
    const failed = [...lone, ...together].filter((r) => r.error !== null);
    if (failed.length) throw new Error(`${kind}: ${failed.length} requests failed: ${failed[0]!.error}`);
    return {
      kind,
      loneDecodeTokensPerSecond: mean(lone.map((r) => r.decodeTokensPerSecond)),
      loneTtftP50Ms: percentile(
        lone.map((r) => r.ttftMs),
        50,
      ),
      togetherDecodeTokensPerSecond: mean(together.map((r) => r.decodeTokensPerSecond)),
      togetherTtftP50Ms: percentile(
        together.map((r) => r.ttftMs),
        50,
      ),
      togetherCompletionTokensPerSecond: (completion * 1000) / wallMs,
    };
  });
}

export async function runEngineKinds(options: EngineKindsOptions) {
  const rows = [];
  for (const kind of ENGINE_KINDS) rows.push(await measureKind(kind, options));
  const f = (n: number): string => n.toFixed(1);
  console.log(
    `engine kinds: 1 replica × ${options.slots} slots × ${options.threads} threads, ${options.promptTokens}-token prompts, ${options.answerTokens} tokens each\n` +
      table(
        ['kind', 'lone decode tok/s', 'lone TTFT p50 ms', `${options.slots} at once: decode tok/s each`, 'TTFT p50 ms', 'total tok/s'],
        rows.map((r) => [
          r.kind,
          f(r.loneDecodeTokensPerSecond),
          f(r.loneTtftP50Ms),
          f(r.togetherDecodeTokensPerSecond),
          f(r.togetherTtftP50Ms),
          f(r.togetherCompletionTokensPerSecond),
        ]),
      ),
  );
  return rows;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  await runEngineKinds({
    model: await ensureTestModel('bench'),
    slots: 4,
    threads: 2,
    contextSize: 2048,
    promptTokens: quick ? 256 : 1024,
    answerTokens: quick ? 16 : 64,
    rounds: quick ? 2 : 5,
  });
}
