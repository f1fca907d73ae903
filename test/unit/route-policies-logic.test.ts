/**
 * Adding a routing policy is one file and one registration (pure logic, no engine): a stand-in policy
 * registered here is known to the run config, the router and its tie-break, and an unknown name is refused
 * in words wherever a policy is named.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/config/run-config.js';
import { ExactPrefixIndex } from '../../core/router/prefix-index.js';
import { registerRoutePolicy, routePolicyNames } from '../../core/router/policies.js';
import { decision } from '../../core/router/route-costs.js';
import type { RoutePolicy } from '../../core/router/route-policy.js';
import { Router, type RouteCandidate } from '../../core/router/router.js';

/** A stand-in: the candidate with the most free slots. */
const mostFreeSlots: RoutePolicy = {
  name: 'most-free-slots',
  describe: 'the replica with the most free slots (a test-only policy)',
  choose: ({ promptTokens, candidates, held, breakTies }) => {
    const costs = candidates.map((c) => c.running - c.slots);
    const pick = breakTies(
      candidates.map((c) => held(c)),
      costs,
      0,
    );
    return decision(candidates[pick]!, held(candidates[pick]!), promptTokens, costs[pick]!, 'policy');
  },
};

const candidate = (replica: number, running: number, slots: number): RouteCandidate => ({
  replica,
  running,
  slots,
  prefillTokensPerMs: null,
  pendingPrefillTokens: 0,
});

describe('routing policies', () => {
  it('refuses a policy nobody registered, naming the registered ones', () => {
    expect(() => parseRunConfig({ model: 'm.gguf', routing: 'most-free-slots' })).toThrow(
      'config routing: "most-free-slots" is not a routing policy; use "prefix", "round-robin", "least-loaded"',
    );
    expect(() => new Router(new ExactPrefixIndex(), 'most-free-slots')).toThrow('"most-free-slots" is not a routing policy');
  });

  it("routes by a policy registered from its own file, its ties broken as every policy's are", () => {
    registerRoutePolicy(mostFreeSlots);
    expect(routePolicyNames()).toEqual(['prefix', 'round-robin', 'least-loaded', 'most-free-slots']);
    expect(parseRunConfig({ model: 'm.gguf', routing: 'most-free-slots' }).routing).toBe('most-free-slots');
    const router = new Router(new ExactPrefixIndex(), 'most-free-slots');
    expect(router.currentPolicy).toBe('most-free-slots');
    expect(router.route([], 10, [candidate(0, 1, 2), candidate(1, 1, 4), candidate(2, 0, 2)])).toMatchObject({
      replica: 1,
      cost: -3,
      costKind: 'policy',
      prefillTokens: 10,
    });
    // Equal costs: the one routed to least (replica 1 has one decision), then the lower index.
    expect(router.route([], 10, [candidate(1, 0, 2), candidate(2, 0, 2)])!.replica).toBe(2);
    router.setPolicy('round-robin');
    expect(router.route([], 10, [candidate(0, 0, 2), candidate(1, 0, 2), candidate(2, 0, 2)])!.replica).toBe(0);
  });
});
