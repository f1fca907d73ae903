/**
 * The router (DESIGN §4): which living replica gets a prompt, by the policy in force (policies.ts lists
 * them, one file each in policies/); it counts each decision per replica, which the tie-break and
 * round-robin read. What policies weigh is route-costs.ts; the dispatch plan (dispatch-plan.ts) asks it.
 */
import { breakTies, heldBy } from './route-costs.js';
import { DEFAULT_ROUTING, routePolicy, routePolicyNames } from './policies.js';
import type { PrefixIndex } from './prefix-index.js';
import type { RouteCandidate, RouteDecision, RoutePolicy } from './route-policy.js';

export type { RouteCandidate, RouteDecision } from './route-policy.js';

/** A policy name nobody registered (the contract's and the run config's words name the registered ones). */
export class UnknownRoutingError extends Error {
  constructor(name: string) {
    super(
      `"${name}" is not a routing policy; use ${routePolicyNames()
        .map((n) => `"${n}"`)
        .join(', ')}`,
    );
    this.name = 'UnknownRoutingError';
  }
}

export class Router {
  private readonly routed = new Map<number, number>();
  private lastRouted: number | null = null;
  private policy: RoutePolicy;

  constructor(
    private readonly index: PrefixIndex,
    policy: string = DEFAULT_ROUTING,
  ) {
    this.policy = policyNamed(policy);
  }

  setPolicy(policy: string): void {
    this.policy = policyNamed(policy);
  }

  get currentPolicy(): string {
    return this.policy.name;
  }

  routedCount(replica: number): number {
    return this.routed.get(replica) ?? 0;
  }

  /** Picks a replica for a prompt and counts the decision; null when no candidate. */
  route(blocks: readonly number[], promptTokens: number, candidates: readonly RouteCandidate[]): RouteDecision | null {
    const decision = this.choose(blocks, promptTokens, candidates);
    if (decision) this.noteRouted(decision.replica);
    return decision;
  }

  /** Counts a request bound to `replica` (the dispatcher binds after choosing); round-robin moves past it. */
  noteRouted(replica: number): void {
    this.routed.set(replica, this.routedCount(replica) + 1);
    this.lastRouted = replica;
  }

  /**
   * Picks a replica for a prompt of `promptTokens` tokens with these block hashes without counting it
   * (the dispatcher may look and then hold the request); null when no candidate.
   */
  choose(blocks: readonly number[], promptTokens: number, candidates: readonly RouteCandidate[]): RouteDecision | null {
    if (candidates.length === 0) return null;
    return this.policy.choose({
      promptTokens,
      candidates,
      held: (c, borrowing) => heldBy(this.index, blocks, promptTokens, c, borrowing),
      breakTies: (held, costs, tolerance) => breakTies(candidates, held, costs, tolerance, (replica) => this.routedCount(replica)),
      lastRouted: this.lastRouted,
    });
  }
}

function policyNamed(name: string): RoutePolicy {
  const policy = routePolicy(name);
  if (!policy) throw new UnknownRoutingError(name);
  return policy;
}
