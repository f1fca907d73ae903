/** Policy `least-loaded`, for comparison: the replica running fewest requests (ties as route-costs.ts breaks them, what it holds left out). */
import { decision } from '../route-costs.js';
import type { RoutePolicy } from '../route-policy.js';

export const leastLoadedPolicy: RoutePolicy = {
  name: 'least-loaded',
  describe: 'the replica running fewest requests (for comparison)',
  choose({ promptTokens, candidates, held, breakTies }) {
    const pick = breakTies(
      candidates.map((c) => ({ ...held(c), reusable: 0, cost: c.running })),
      0,
    );
    return decision(pick, promptTokens, pick.cost, 'policy');
  },
};
