/**
 * Routing (DESIGN §4): which living replica gets a prompt. Policy `prefix` (default) costs each candidate:
 * baseline `uncached_tokens + 3000 × running` until every candidate has a measured prefill rate, then the
 * expected time to first token `(pending_prefill + uncached_tokens) / prefill_rate`: its queue wait is the
 * prompt tokens its running requests have still to prefill (late binding offers only replicas with a free
 * slot, so nothing else waits ahead; a running request past its first token only decodes, which the engine
 * batches with a new prefill at little cost to it). Where a replica's prefix cache holds more of the prompt
 * than its slots (the engine then restores it instead of prefilling), the restored tokens count at a restore's
 * cost: measured per tier once the replica has restored from it, else an assumed share of a prefill — cheaper
 * than prefill, dearer than a slot hit. A replica may also borrow: restore an entry that another replica of
 * the same model and context layout saved (`borrowFrom`), at the same restore's cost, so a turn whose history
 * was saved by a busy replica need not wait for it nor prefill it again elsewhere (policy `prefix` only: the
 * others keep each engine to its own cache). Ties (equal baseline costs; measured costs within 25% of the
 * lowest) go to the replica that last served the request's conversation, then the one holding most of the
 * prompt, then one not borrowing it, then fewer running, then fewer routed, then the lower index.
 * `round-robin` and `least-loaded` are kept for comparison. Each decision is counted per replica.
 */
import type { PrefixTier } from '../../common/prefix-cache.js';
import type { RoutingPolicy } from '../config/run-config.js';
import { BLOCK_TOKENS } from './block-hash.js';
import type { PrefixIndex, SavedMatch } from './prefix-index.js';

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
   * Other replicas whose saved prefix-cache entries its engine can restore (local node-llama-cpp replicas
   * of the same model and context layout, in any state); absent or empty: it never borrows.
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

/**
 * What a restored token costs, as a share of a prefilled one, until the replica has measured restores from
 * that tier: loading a saved state is a copy of its bytes (measured on the test model: a few ms for a
 * state that takes a second to prefill), and a disk read costs more than a RAM one.
 */
export const ASSUMED_RESTORE_SHARE: Readonly<Record<PrefixTier, number>> = { ram: 0.02, disk: 0.05 };

/** Before rates are measured nothing tells a decode from a prefill: each running request counts as this many prompt tokens. */
export const BASELINE_RUNNING_PENALTY = 3000;
/**
 * Measured costs within this fraction of each other are a tie: measured rates of equal cards differ by
 * noise, and without a tolerance new conversations would pile onto whichever replica measured fastest.
 * Baseline costs are exact token counts, so only equal ones tie: a replica holding a block of the prompt
 * always wins over one holding none.
 */
export const COST_TIE_TOLERANCE = 0.25;

export class Router {
  private readonly routed = new Map<number, number>();
  private nextRoundRobin = 0;

  constructor(
    private readonly index: PrefixIndex,
    private policy: RoutingPolicy = 'prefix',
  ) {}

  setPolicy(policy: RoutingPolicy): void {
    this.policy = policy;
  }

  get currentPolicy(): RoutingPolicy {
    return this.policy;
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
    this.nextRoundRobin = replica + 1;
  }

  /**
   * Picks a replica for a prompt of `promptTokens` tokens with these block hashes without counting it
   * (the dispatcher may look and then hold the request); null when no candidate.
   */
  choose(blocks: readonly number[], promptTokens: number, candidates: readonly RouteCandidate[]): RouteDecision | null {
    if (candidates.length === 0) return null;
    /** What the candidate holds of the prompt: in a slot (`hit`), and a longer saved prefix its engine would restore (borrowed too when `borrowing`). */
    const held = (c: RouteCandidate, borrowing = false) => {
      const hit = Math.min(this.index.matchedBlocks(c.replica, blocks) * BLOCK_TOKENS, promptTokens);
      const restore = this.restorable(c, blocks, promptTokens, hit, borrowing);
      return { c, hit, restore, reusable: restore?.tokens ?? hit };
    };
    const decide = (pick: ReturnType<typeof held>, cost: number, costKind: RouteDecision['costKind']): RouteDecision => ({
      replica: pick.c.replica,
      cachedTokens: pick.hit,
      prefillTokens: promptTokens - pick.reusable,
      cost,
      costKind,
      ...(pick.restore ? { restore: pick.restore } : {}),
    });
    if (this.policy === 'round-robin') {
      const sorted = [...candidates].sort((a, b) => a.replica - b.replica);
      return decide(held(sorted.find((c) => c.replica >= this.nextRoundRobin) ?? sorted[0]!), 0, 'policy');
    }
    if (this.policy === 'least-loaded') {
      const pick = this.breakTies(candidates.map((c) => ({ ...held(c), reusable: 0, cost: c.running })), 0);
      return decide(pick, pick.cost, 'policy');
    }
    const measured = candidates.every((c) => c.prefillTokensPerMs !== null && c.prefillTokensPerMs > 0);
    const costed = candidates.map((c) => {
      const h = held(c, true);
      const uncached = promptTokens - h.reusable;
      const restoreCost = h.restore
        ? h.restore.tokens * (measured ? (c.restoreMsPerToken?.[h.restore.tier] ?? ASSUMED_RESTORE_SHARE[h.restore.tier] / c.prefillTokensPerMs!) : ASSUMED_RESTORE_SHARE[h.restore.tier])
        : 0;
      const cost = measured ? (c.pendingPrefillTokens + uncached) / c.prefillTokensPerMs! : uncached + BASELINE_RUNNING_PENALTY * c.running;
      return { ...h, cost: cost + restoreCost };
    });
    const pick = this.breakTies(costed, measured ? COST_TIE_TOLERANCE : 0);
    return decide(pick, pick.cost, measured ? 'measured' : 'baseline');
  }

  /**
   * The saved prefix the candidate's engine would restore for this prompt: one holding more than its slots'
   * `hit` — its own, or with `borrowing` one of its `borrowFrom` replicas' holding more (on equal blocks
   * RAM before disk, then its own: nothing to link, then the first listed).
   */
  private restorable(c: RouteCandidate, blocks: readonly number[], promptTokens: number, hit: number, borrowing: boolean): RouteDecision['restore'] | undefined {
    let best: (SavedMatch & { owner: number }) | null = null;
    for (const owner of [c.replica, ...(borrowing ? (c.borrowFrom ?? []) : [])]) {
      const saved = this.index.matchedSaved(owner, blocks, owner === c.replica ? undefined : c.borrowTiers);
      if (saved && (!best || saved.blocks > best.blocks || (saved.blocks === best.blocks && saved.tier === 'ram' && best.tier === 'disk'))) best = { ...saved, owner };
    }
    const tokens = best ? Math.min(best.blocks * BLOCK_TOKENS, promptTokens) : 0;
    if (!best || tokens <= hit) return undefined;
    return { tokens, tier: best.tier, entry: best.entry, ...(best.owner !== c.replica ? { borrow: { replica: best.owner } } : {}) };
  }

  /**
   * The pick among the candidates whose cost is within `tolerance` of the lowest (measured against the lowest,
   * not pair by pair, so the order of candidates never changes the pick): the one already serving the
   * conversation, then the one holding most of the prompt (in a slot or its prefix cache: it leaves the least
   * work to do), then one that need not borrow it (the owner restoring its own entry keeps the conversation
   * home and no second copy in another cache), then the least busy, then the one routed to least, then the
   * lowest index.
   */
  private breakTies<T extends { c: RouteCandidate; cost: number; reusable: number; restore?: RouteDecision['restore'] }>(costed: T[], tolerance: number): T {
    const lowest = Math.min(...costed.map((x) => x.cost));
    const tied = costed.filter((x) => x.cost - lowest <= tolerance * Math.abs(lowest));
    const preference = (x: T): number[] => [x.c.servedConversation ? 0 : 1, -x.reusable, x.restore?.borrow ? 1 : 0, x.c.running, this.routedCount(x.c.replica), x.c.replica];
    return tied.reduce((best, next) => {
      const a = preference(next);
      const b = preference(best);
      const first = a.findIndex((v, i) => v !== b[i]);
      return first >= 0 && a[first]! < b[first]! ? next : best;
    });
  }
}
