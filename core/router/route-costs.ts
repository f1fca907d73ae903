/**
 * What every routing policy weighs (DESIGN §4): what each candidate holds of a prompt — in a slot, or saved
 * in its prefix cache (its own or, borrowing, a peer's) — and the tie-break among candidates of equal cost.
 */
import type { PrefixTier } from '../../common/prefix-cache.js';
import { BLOCK_TOKENS } from './block-hash.js';
import type { PrefixIndex } from './prefix-index.js';
import type { Held, RouteCandidate, RouteDecision } from './route-policy.js';

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

/** What a candidate holding none of a prompt holds (one object: most candidates of a decision hold nothing of its prompt). */
export const HOLDS_NOTHING: Held = Object.freeze({ hit: 0, restore: undefined, reusable: 0 });

/** What `c` holds of a prompt with these block hashes: in a slot, and a longer saved prefix its engine would restore (borrowed too when `borrowing`). */
export function heldBy(index: PrefixIndex, blocks: readonly number[], promptTokens: number, c: RouteCandidate, borrowing = false): Held {
  const hit = Math.min(index.matchedBlocks(c.replica, blocks) * BLOCK_TOKENS, promptTokens);
  const restore = restorable(index, c, blocks, promptTokens, hit, borrowing);
  if (hit === 0 && !restore) return HOLDS_NOTHING;
  return { hit, restore, reusable: restore?.tokens ?? hit };
}

/** A pick made into a decision: the replica, what it holds, what it will prefill, at what cost. */
export function decision(c: RouteCandidate, held: Held, promptTokens: number, cost: number, costKind: RouteDecision['costKind']): RouteDecision {
  return {
    replica: c.replica,
    cachedTokens: held.hit,
    prefillTokens: promptTokens - held.reusable,
    cost,
    costKind,
    ...(held.restore ? { restore: held.restore } : {}),
  };
}

/**
 * The saved prefix the candidate's engine would restore for this prompt: one holding more than its slots'
 * `hit` — its own, or with `borrowing` one of its `borrowFrom` replicas' holding more (on equal blocks
 * RAM before disk, then its own: nothing to link, then the first listed).
 */
function restorable(
  index: PrefixIndex,
  c: RouteCandidate,
  blocks: readonly number[],
  promptTokens: number,
  hit: number,
  borrowing: boolean,
): RouteDecision['restore'] | undefined {
  let best = index.matchedSaved(c.replica, blocks);
  let owner = c.replica;
  for (const peer of (borrowing && c.borrowFrom) || []) {
    const saved = index.matchedSaved(peer, blocks, c.borrowTiers);
    if (saved && (!best || saved.blocks > best.blocks || (saved.blocks === best.blocks && saved.tier === 'ram' && best.tier === 'disk'))) {
      best = saved;
      owner = peer;
    }
  }
  const tokens = best ? Math.min(best.blocks * BLOCK_TOKENS, promptTokens) : 0;
  if (!best || tokens <= hit) return undefined;
  return { tokens, tier: best.tier, entry: best.entry, ...(owner !== c.replica ? { borrow: { replica: owner } } : {}) };
}

/**
 * The pick among the candidates whose cost is within `tolerance` of the lowest (measured against the lowest,
 * not pair by pair, so the order of candidates never changes the pick): the one already serving the
 * conversation, then the one holding most of the prompt (in a slot or its prefix cache: it leaves the least
 * work to do), then one that need not borrow it (the owner restoring its own entry keeps the conversation
 * home and no second copy in another cache), then the least busy, then the one routed to least
 * (`routedCount`), then the lowest index.
 */
export function breakTies(
  candidates: readonly RouteCandidate[],
  held: readonly Held[],
  costs: ArrayLike<number>,
  tolerance: number,
  routedCount: (replica: number) => number,
): number {
  let lowest = Infinity;
  for (let i = 0; i < costs.length; i++) lowest = Math.min(lowest, costs[i]!);
  let best = -1;
  for (let i = 0; i < candidates.length; i++)
    if (costs[i]! - lowest <= tolerance * Math.abs(lowest) && (best < 0 || preferred(candidates[i]!, held[i]!, candidates[best]!, held[best]!, routedCount)))
      best = i;
  return best;
}

/** Whether candidate `a` (holding `ha`) goes before `b` (holding `hb`) in breakTies' order, field by field (this runs per candidate per decision). */
function preferred(a: RouteCandidate, ha: Held, b: RouteCandidate, hb: Held, routedCount: (replica: number) => number): boolean {
  if (!a.servedConversation !== !b.servedConversation) return !!a.servedConversation;
  if (ha.reusable !== hb.reusable) return ha.reusable > hb.reusable;
  if (!ha.restore?.borrow !== !hb.restore?.borrow) return !ha.restore?.borrow;
  if (a.running !== b.running) return a.running < b.running;
  const routed = routedCount(a.replica) - routedCount(b.replica);
  if (routed !== 0) return routed < 0;
  return a.replica < b.replica;
}
