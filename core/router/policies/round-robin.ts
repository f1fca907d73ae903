/** Policy `round-robin`, for comparison: the next replica by index after the one bound last, blind to what each holds. */
import { decision } from '../route-costs.js';
import type { RoutePolicy } from '../route-policy.js';

export const roundRobinPolicy: RoutePolicy = {
  name: 'round-robin',
  describe: 'each replica in turn, blind to what it holds (for comparison)',
  choose({ promptTokens, candidates, held, lastRouted }) {
    const sorted = [...candidates].sort((a, b) => a.replica - b.replica);
    const next = lastRouted === null ? 0 : lastRouted + 1;
    const c = sorted.find((c) => c.replica >= next) ?? sorted[0]!;
    return decision(c, held(c), promptTokens, 0, 'policy');
  },
};
