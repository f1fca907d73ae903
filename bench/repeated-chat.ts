/**
 * A chat benchmark's variants (routing policies, servers) run several times over, each time on another
 * script and turn order, and each variant's runs pooled into one row. One run's 80 requests read a median
 * too loosely where TTFTs split between turns that find their history and turns that prefill it whole:
 * the median jumps between the two from script to script. Used by `multiturn` and `peer`'s chat.
 */
import type { ChatTurnResult } from './chat-workload.js';
import { summarise } from './workload.js';

/** One run of one variant on one script. */
export interface ChatRun {
  results: ChatTurnResult[];
  wallMs: number;
  oracle: { share: number; mismatched: number; promptTokens: number };
}

/**
 * Runs each variant `repeats` times, repeat by repeat (`run` gets the repeat, to pick its script); each
 * repeat starts with another variant, so none always runs first on a machine whose load drifts. Returns
 * each variant's runs, in repeat order.
 */
export async function runRepeated<V, R>(variants: readonly V[], repeats: number, run: (variant: V, repeat: number) => Promise<R>): Promise<R[][]> {
  const runs = variants.map(() => [] as R[]);
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const v of variants.map((_, i) => (i + repeat) % variants.length)) runs[v]!.push(await run(variants[v]!, repeat));
  }
  return runs;
}

/**
 * One row from a variant's runs: their requests together (each run's conversations numbered after the
 * one before, as the distinct conversations they are), their walls added, the oracle's share over all
 * their prompt tokens; with more than one run, each run's TTFT p50 and throughput beside.
 */
export function pooled(runs: readonly ChatRun[], conversations: number) {
  const results = runs.flatMap((run, repeat) => run.results.map((r) => ({ ...r, user: r.user === undefined ? undefined : r.user + repeat * conversations })));
  const promptTokens = runs.reduce((n, run) => n + run.oracle.promptTokens, 0);
  const each = runs.map((run) => summarise(run.results, run.wallMs));
  return {
    ...summarise(
      results,
      runs.reduce((ms, run) => ms + run.wallMs, 0),
    ),
    oracle: promptTokens ? runs.reduce((n, run) => n + run.oracle.share * run.oracle.promptTokens, 0) / promptTokens : 0,
    oracleMismatches: runs.reduce((n, run) => n + run.oracle.mismatched, 0),
    ...(runs.length > 1 ? { ttftP50ByRepeatMs: each.map((s) => s.ttftP50Ms), requestsPerSecondByRepeat: each.map((s) => s.requestsPerSecond) } : {}),
  };
}

/** Each repeat's figure of one row over another's (`numerator[i] / denominator[i]`), where both ran several times; else undefined. */
export const byRepeat = (numerator: readonly number[] | undefined, denominator: readonly number[] | undefined): number[] | undefined =>
  numerator && denominator ? numerator.map((x, i) => x / denominator[i]!) : undefined;

/** Ratios by repeat as printed: `2.12×, 2.16×, 2.07×`. */
export const repeatRatios = (ratios: readonly number[]): string => ratios.map((x) => `${x.toFixed(2)}×`).join(', ');
