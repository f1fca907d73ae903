/**
 * What a routing policy is (DESIGN §4): a name, a line for the user, and a choice of one replica among the
 * candidates that can take a prompt now. Policies live one per file in policies/ and are listed in
 * policies.ts; the Router (router.ts) counts their decisions, and route-costs.ts holds what they weigh.
 */
import type { PrefixTier } from '../../common/prefix-cache.js';

/** What the router knows of a replica that can take requests now. */
export interface RouteCandidate {
  readonly replica: number;
  readonly running: number;
  readonly slots: number;
  /** Measured prompt tokens per ms, once known. */
  readonly prefillTokensPerMs: number | null;
  /**
   * Prompt tokens of its running requests still to be prefilled (bound, no first token yet): the work a
   * new prompt queues behind in the engine. Requests past their first token only decode, which the engine
   * batches with a new prompt's prefill at little cost to it.
   */
  readonly pendingPrefillTokens: number;
  /** It served the request's conversation last (a first turn under one block leaves no trace in the index). */
  readonly servedConversation?: boolean;
  /** Measured ms per token of a restore from each tier of its prefix cache, once it has restored from it. */
  readonly restoreMsPerToken?: Partial<Record<PrefixTier, number>>;
  /**
   * Other replicas whose saved prefix-cache entries its engine can restore (local replicas of the same model
   * and context layout, in any state); absent or empty: it never borrows.
   */
  readonly borrowFrom?: readonly number[];
  /** The tiers of those replicas' entries it can restore (a llama-server child: their slot files, `disk`); absent: every tier. */
  readonly borrowTiers?: readonly PrefixTier[];
}

export interface RouteDecision {
  readonly replica: number;
  /** Prompt tokens the index says that replica holds. */
  readonly cachedTokens: number;
  /** Prompt tokens that replica will prefill: neither held in a slot nor restored. */
  readonly prefillTokens: number;
  readonly cost: number;
  readonly costKind: 'baseline' | 'measured' | 'policy';
  /**
   * Prompt tokens the replica's prefix cache would restore (more than its slots hold), from saved entry
   * `entry` — its own, or with `borrow` the entry of another replica; absent when none.
   */
  readonly restore?: { readonly tokens: number; readonly tier: PrefixTier; readonly entry: number; readonly borrow?: { readonly replica: number } };
}

/** What a candidate holds of a prompt: in a slot (`hit`), a longer saved prefix its engine would restore, and the larger of the two. */
export interface Held {
  readonly hit: number;
  readonly restore: RouteDecision['restore'] | undefined;
  readonly reusable: number;
}

/** One prompt to place, with what the router's costs tell of each candidate. */
export interface RouteAsk {
  readonly promptTokens: number;
  /** The candidates, never empty. */
  readonly candidates: readonly RouteCandidate[];
  /** What a candidate holds of the prompt (in a slot, or saved in its prefix cache; `borrowing`: its peers' too). */
  held(candidate: RouteCandidate, borrowing?: boolean): Held;
  /**
   * The pick (its position in `candidates`) among those whose `costs[i]` is within `tolerance` of the lowest,
   * `held[i]` being what candidate i holds as the tie-break weighs it (route-costs.ts, `breakTies`).
   */
  breakTies(held: readonly Held[], costs: ArrayLike<number>, tolerance: number): number;
  /** The replica the router bound last; null before the first. */
  readonly lastRouted: number | null;
}

export interface RoutePolicy {
  /** Its name in a run config's `routing` and the dashboard. */
  readonly name: string;
  /** One line for the user. */
  readonly describe: string;
  /** Its pick: a candidate and what it holds, made into a decision (route-costs.ts, `decision`). */
  choose(ask: RouteAsk): RouteDecision;
}
