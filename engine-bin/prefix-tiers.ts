/**
 * The prefix cache's bookkeeping (pure, no I/O, so it is tested without an engine): the saved entries —
 * each the tokens an evicted slot held and the bytes of its KV state — in two tiers with byte budgets and
 * one LRU order across both. A new entry goes to RAM; RAM over budget spills its least recently used
 * entries to disk; disk over budget drops its least recently used. An entry larger than the RAM budget
 * goes straight to disk, one larger than both is not kept. An entry that is a prefix of a newer one is
 * dropped (the newer holds it all); a new one that is a prefix of a kept entry is not kept. Every change
 * is returned as a plan of moves that the caller carries out on the states (prefix-cache.ts).
 */
import type { PrefixTier } from '../common/prefix-cache.js';
import { commonPrefixLength } from './slot-choice.js';

export interface TierEntry {
  readonly id: number;
  readonly tokens: readonly number[];
  readonly bytes: number;
  tier: PrefixTier;
  /** A counter, not a clock: the higher, the more recently saved or matched. */
  lastUsed: number;
}

/** What to do with states: entries to move to disk (in this order) and entries to forget. */
export interface TierPlan {
  readonly spill: readonly TierEntry[];
  readonly drop: readonly TierEntry[];
}

export interface TierBudgets {
  readonly ramBytes: number;
  readonly diskBytes: number;
}

export class PrefixTiers {
  private readonly entries = new Map<number, TierEntry>();
  private clock = 0;

  constructor(
    private readonly budgets: TierBudgets,
    private nextId = 0,
  ) {}

  /** Whether anything can be kept at all. */
  get enabled(): boolean {
    return this.budgets.ramBytes > 0 || this.budgets.diskBytes > 0;
  }

  /** The id the next admitted entry gets (so a successor cache keeps ids unique). */
  get idAfter(): number {
    return this.nextId;
  }

  bytesIn(tier: PrefixTier): number {
    let sum = 0;
    for (const e of this.entries.values()) if (e.tier === tier) sum += e.bytes;
    return sum;
  }

  list(): readonly TierEntry[] {
    return [...this.entries.values()];
  }

  /** The entry sharing the longest prefix with `prompt` (more recently used on a tie); null when none shares any. */
  longestMatch(prompt: readonly number[]): { entry: TierEntry; commonPrefix: number } | null {
    let best: { entry: TierEntry; commonPrefix: number } | null = null;
    for (const entry of this.entries.values()) {
      const commonPrefix = commonPrefixLength(entry.tokens, prompt);
      if (commonPrefix > 0 && (!best || commonPrefix > best.commonPrefix || (commonPrefix === best.commonPrefix && entry.lastUsed > best.entry.lastUsed))) {
        best = { entry, commonPrefix };
      }
    }
    return best;
  }

  /**
   * Keeps `tokens` whose state takes `bytes`: the new entry (null when it is not kept) and the plan that
   * makes room for it. The caller saves the state into the entry's tier, then carries out the plan.
   */
  admit(tokens: readonly number[], bytes: number): { entry: TierEntry | null } & TierPlan {
    if (this.refresh(tokens)) return { entry: null, spill: [], drop: [] };
    const tier: PrefixTier | null = bytes <= this.budgets.ramBytes ? 'ram' : bytes <= this.budgets.diskBytes ? 'disk' : null;
    if (tier === null) return { entry: null, spill: [], drop: [] };
    const superseded = [...this.entries.values()].filter((e) => commonPrefixLength(e.tokens, tokens) === e.tokens.length);
    for (const e of superseded) this.entries.delete(e.id);
    const entry: TierEntry = { id: this.nextId++, tokens, bytes, tier, lastUsed: ++this.clock };
    this.entries.set(entry.id, entry);
    const plan = this.fitBudgets();
    return { entry, spill: plan.spill, drop: [...superseded, ...plan.drop] };
  }

  /**
   * When a kept entry holds all of `tokens` (as its prefix), marks it the most recently used and says so:
   * there is nothing to save.
   */
  refresh(tokens: readonly number[]): boolean {
    const covering = [...this.entries.values()].find((e) => e.tokens.length >= tokens.length && commonPrefixLength(e.tokens, tokens) === tokens.length);
    if (covering) covering.lastUsed = ++this.clock;
    return covering !== undefined;
  }

  /** The entry leaves the cache (its state went into a slot, could not be saved or read, or was a copy); it, if it was kept. */
  take(id: number): TierEntry | undefined {
    const entry = this.entries.get(id);
    this.entries.delete(id);
    return entry;
  }

  /** Forgets every entry; the caller discards their states. */
  clear(): readonly TierEntry[] {
    const all = this.list();
    this.entries.clear();
    return all;
  }

  /** Spills RAM's least recently used to disk, then drops disk's least recently used, until both fit. */
  private fitBudgets(): TierPlan {
    const spill: TierEntry[] = [];
    const drop: TierEntry[] = [];
    const oldestFirst = (tier: PrefixTier): TierEntry[] => [...this.entries.values()].filter((e) => e.tier === tier).sort((a, b) => a.lastUsed - b.lastUsed);
    let ram = this.bytesIn('ram');
    for (const e of oldestFirst('ram')) {
      if (ram <= this.budgets.ramBytes) break;
      ram -= e.bytes;
      if (e.bytes <= this.budgets.diskBytes) {
        e.tier = 'disk';
        spill.push(e);
      } else {
        this.entries.delete(e.id);
        drop.push(e);
      }
    }
    let disk = this.bytesIn('disk');
    for (const e of oldestFirst('disk')) {
      if (disk <= this.budgets.diskBytes) break;
      disk -= e.bytes;
      this.entries.delete(e.id);
      drop.push(e);
    }
    // An entry spilled and then dropped in the same pass is only dropped.
    return { spill: spill.filter((e) => this.entries.has(e.id)), drop };
  }
}
