/**
 * Policy `prefix` (the default): each candidate costs its expected time to first token — baseline
 * `uncached_tokens + 3000 × running` until every candidate has a measured prefill rate, then
 * `(pending_prefill + uncached_tokens) / prefill_rate`: its queue wait is the prompt tokens its running
 * requests have still to prefill (late binding offers only replicas with a free slot, so nothing else waits
 * ahead; a running request past its first token only decodes, which the engine batches with a new prefill
 * at little cost to it). Tokens its prefix cache would restore (its own entries, or borrowed from a peer of
 * the same layout) cost a restore: measured per tier once it has restored from it, else an assumed share of
 * a prefill. Ties (equal baseline costs; measured costs within 25% of the lowest) as route-costs.ts breaks them.
 */
import { ASSUMED_RESTORE_SHARE, BASELINE_RUNNING_PENALTY, COST_TIE_TOLERANCE, decision } from '../route-costs.js';
import type { RoutePolicy } from '../route-policy.js';

export const prefixPolicy: RoutePolicy = {
  name: 'prefix',
  describe: 'the replica that reaches the first token soonest: the prompt it already holds, its queue and its measured prefill rate',
  choose({ promptTokens, candidates, held, breakTies }) {
    const measured = candidates.every((c) => c.prefillTokensPerMs !== null && c.prefillTokensPerMs > 0);
    const holds = candidates.map((c) => held(c, true));
    const costs = candidates.map((c, i) => {
      const { restore, reusable } = holds[i]!;
      const uncached = promptTokens - reusable;
      const cost = measured ? (c.pendingPrefillTokens + uncached) / c.prefillTokensPerMs! : uncached + BASELINE_RUNNING_PENALTY * c.running;
      if (!restore) return cost;
      const msPerToken = measured
        ? (c.restoreMsPerToken?.[restore.tier] ?? ASSUMED_RESTORE_SHARE[restore.tier] / c.prefillTokensPerMs!)
        : ASSUMED_RESTORE_SHARE[restore.tier];
      return cost + restore.tokens * msPerToken;
    });
    const pick = breakTies(holds, costs, measured ? COST_TIE_TOLERANCE : 0);
    return decision(candidates[pick]!, holds[pick]!, promptTokens, costs[pick]!, measured ? 'measured' : 'baseline');
  },
};
