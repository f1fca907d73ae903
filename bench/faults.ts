/**
 * faults: a kill under load, side by side with the same load without it. Two CPU replicas × 2 slots get
 * N long streams at once (most of them wait in core's queue); in the fault run replica 0 is SIGKILLed
 * once it holds its first requests, in prefill, and at the latest `killAfterMs` after they were sent. Reported per run: lost requests (an error, or
 * fewer tokens than
 * asked), TTFT p50/p99/max, how many failed over, and how many the healed replica served from the queue.
 * The integration test `serve-under-faults` asserts on the same run.
 */
import OpenAI from 'openai';
import { withServed } from './served-replicas.js';
import { percentile, table } from './stats.js';
import { streamRequest, type RequestResult } from './workload.js';

export interface FaultRunOptions {
  model: string;
  streams: number;
  promptTokens: number;
  answerTokens: number;
  killAfterMs: number;
  slots: number;
  contextSize: number;
}

export interface FaultRun {
  kill: boolean;
  results: RequestResult[];
  lost: number;
  failedOver: number;
  /** Requests the killed replica served after it healed (it took queued work). */
  servedByHealed: number;
  /** From the kill until the replica was ready again (0 without a kill). */
  healMs: number;
  /** From sending until the kill (0 without a kill). */
  killedAfterMs: number;
  ttftP50Ms: number;
  ttftP99Ms: number;
  ttftMaxMs: number;
  /** The median stream's decode rate: the run's own pace, which a busy machine slows for every stream alike. */
  decodeTokensPerSecond: number;
  wallMs: number;
}

const VICTIM = 0;

/** Prompt ids drawn from ordinary pieces of the test vocabulary; `offset` makes each stream's its own. */
const prompt = (length: number, offset: number): number[] => Array.from({ length }, (_, i) => 300 + ((i * 7 + offset) % 300));

export async function faultRun(options: FaultRunOptions, kill: boolean): Promise<FaultRun> {
  return withServed(
    { model: options.model, replicas: 2, engine: { slots: options.slots, threads: 1, contextSize: options.contextSize }, heal: { cooldownMs: 1000 } },
    async (target, served) => {
      const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'unused', maxRetries: 0, timeout: 600_000 });
      const started = performance.now();
      const runs = Array.from({ length: options.streams }, (_, i) =>
        streamRequest(
          client,
          target.model,
          { kind: 'completion', prompt: prompt(options.promptTokens, (kill ? 1000 : 0) + i * 13) },
          options.answerTokens,
          i + 1,
        ),
      );
      let healMs = 0;
      let killedAfterMs = 0;
      if (kill) {
        // Killed once the victim holds a full set of bound requests (each just granted its slot, in prefill),
        // at the latest `killAfterMs` after sending: with the engine's first-in-first-out prefill the first
        // prompt's first token can come within 150 ms, and a request that has sent tokens is not failed over.
        const { replicas } = served.workstation;
        const deadline = started + options.killAfterMs;
        while (performance.now() < deadline && (replicas.replicaView()[VICTIM]?.running ?? 0) < options.slots) {
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
        const killedAt = performance.now();
        killedAfterMs = killedAt - started;
        const healed = new Promise<void>((resolve) => {
          const off = replicas.onReady(() => {
            off();
            healMs = performance.now() - killedAt;
            resolve();
          });
        });
        replicas.driverOf(VICTIM).local!.signal('SIGKILL');
        await healed;
      }
      const results = await Promise.all(runs);
      const wallMs = performance.now() - started;
      const ttfts = results.filter((r) => !r.error).map((r) => r.ttftMs);
      return {
        kill,
        results,
        lost: results.filter((r) => r.error !== null || r.completionTokens < options.answerTokens).length,
        failedOver: results.filter((r) => r.failedOver.length > 0).length,
        servedByHealed: kill ? results.filter((r) => !r.error && r.replica === VICTIM).length : 0,
        healMs,
        killedAfterMs,
        ttftP50Ms: percentile(ttfts, 50),
        ttftP99Ms: percentile(ttfts, 99),
        ttftMaxMs: Math.max(0, ...ttfts),
        decodeTokensPerSecond: percentile(
          results.filter((r) => !r.error).map((r) => r.decodeTokensPerSecond),
          50,
        ),
        wallMs,
      };
    },
  );
}

/**
 * The worst TTFT with the kill over the worst without, each counted in tokens decoded at its own run's
 * median pace: a machine that is busier during one of the two runs (CI's neighbours) slows every stream of
 * that run alike, which this cancels; what the kill costs in waiting does not cancel.
 */
export const paceNormalizedRatio = (calm: FaultRun, faulted: FaultRun): number =>
  (faulted.ttftMaxMs * faulted.decodeTokensPerSecond) / (calm.ttftMaxMs * calm.decodeTokensPerSecond);

export async function runFaults(options: FaultRunOptions) {
  const runs = [await faultRun(options, false), await faultRun(options, true)];
  const [calm, faulted] = runs as [FaultRun, FaultRun];
  const ratio = faulted.ttftMaxMs / calm.ttftMaxMs;
  const normalized = paceNormalizedRatio(calm, faulted);
  const text = table(
    [
      'run',
      'requests',
      'lost',
      'failed over',
      'healed in ms',
      'served by healed',
      'TTFT p50 ms',
      'TTFT p99 ms',
      'TTFT max ms',
      'decode tok/s (median)',
      'wall s',
    ],
    runs.map((r) => [
      r.kill ? `SIGKILL replica ${VICTIM} at ${Math.round(r.killedAfterMs)} ms` : 'no fault',
      String(r.results.length),
      String(r.lost),
      String(r.failedOver),
      r.kill ? Math.round(r.healMs) : '-',
      String(r.servedByHealed),
      Math.round(r.ttftP50Ms),
      Math.round(r.ttftP99Ms),
      Math.round(r.ttftMaxMs),
      r.decodeTokensPerSecond.toFixed(1),
      (r.wallMs / 1000).toFixed(1),
    ]),
  );
  const strip = (r: FaultRun) => ({
    ...r,
    results: r.results.map(({ ttftMs, replica, failedOver, error, completionTokens }) => ({ ttftMs, replica, failedOver, error, completionTokens })),
  });
  return {
    config: { ...options, model: undefined },
    calm: strip(calm),
    faulted: strip(faulted),
    worstTtftRatio: ratio,
    paceNormalizedWorstTtftRatio: normalized,
    text: `${text}\n\nworst TTFT with the kill / without: ${ratio.toFixed(2)}× (${normalized.toFixed(2)}× counted in tokens at each run's own decode pace)`,
  };
}
