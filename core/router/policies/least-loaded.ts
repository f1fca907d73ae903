/** Policy `least-loaded`, for comparison: the replica running fewest requests (ties as route-costs.ts breaks them, what it holds left out). */
import { decision, HOLDS_NOTHING } from '../route-costs.js';
import type { RoutePolicy } from '../route-policy.js';

export const leastLoadedPolicy: RoutePolicy = {
  name: 'least-loaded',
  describe: 'the replica running fewest requests (for comparison)',
  choose({ promptTokens, candidates, held, breakTies }) {
    const pick = breakTies(
      candidates.map(() => HOLDS_NOTHING),
      candidates.map((c) => c.running),
      0,
    );
    const c = candidates[pick]!;
    return decision(c, { ...held(c), reusable: 0 }, promptTokens, c.running, 'policy');
  },
};
