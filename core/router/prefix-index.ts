/**
 * The prefix index (DESIGN §4): which replica holds which prompt prefix, as chained block hashes.
 * - Exact form, for local engines: each replica's slots are mirrored from the engine's replies (which
 *   slot served, how much it kept), so a slot reused for another conversation drops the blocks it lost;
 *   and so are the entries of the engine's tiered prefix cache (an evicted slot's blocks, in RAM or on
 *   disk), which the router counts at a restore's cost.
 * - Estimated form, for replicas whose cache cannot be seen: blocks noted as served, LRU-capped.
 * Either form answers how many leading blocks of a prompt a replica holds.
 */
import { PREFIX_TIERS, type PrefixTier, type SavedEntryView } from '../../common/prefix-cache.js';
import { leadingRun } from './block-hash.js';
import { PrefixTree } from './prefix-tree.js';

/** The longest prefix a replica could restore from its prefix cache: the entry, and the tier it is in. */
export interface SavedMatch {
  readonly blocks: number;
  readonly tier: PrefixTier;
  readonly entry: number;
}

export interface PrefixIndex {
  /** Leading blocks of `blocks` that `replica` holds. */
  matchedBlocks(replica: number, blocks: readonly number[]): number;
  /** The longest leading run of `blocks` in one of `replica`'s saved entries (only those in `tiers` when given); null when none (or not known). */
  matchedSaved(replica: number, blocks: readonly number[], tiers?: readonly PrefixTier[]): SavedMatch | null;
  /** Forget everything of a replica (it restarted, unloaded, or dropped its cache). */
  forgetReplica(replica: number): void;
  /** Blocks held in all (for memory accounting and the dashboard). */
  readonly size: number;
}

/** Leading blocks of `blocks` that `replica` would not prefill: held in a slot, or saved in its prefix cache. */
export function reusableBlocks(index: PrefixIndex, replica: number, blocks: readonly number[]): number {
  return Math.max(index.matchedBlocks(replica, blocks), index.matchedSaved(replica, blocks)?.blocks ?? 0);
}

/** Block → the saved entry that holds it, or the entries when several do (a shared start). */
type Holders = Map<number, number | Set<number>>;

function addHolder(holders: Holders, blocks: readonly number[], entry: number): void {
  for (const block of blocks) {
    const entries = holders.get(block);
    if (entries === undefined) holders.set(block, entry);
    else if (typeof entries === 'number') holders.set(block, new Set([entries, entry]));
    else entries.add(entry);
  }
}

function removeHolder(holders: Holders, blocks: readonly number[], entry: number): void {
  for (const block of blocks) {
    const entries = holders.get(block);
    if (entries === entry) holders.delete(block);
    else if (typeof entries === 'object') {
      entries.delete(entry);
      if (entries.size === 1) holders.set(block, entries.values().next().value!);
    }
  }
}

/** One entry of a block's holders. */
const anyOf = (entries: number | Set<number>): number => (typeof entries === 'number' ? entries : entries.values().next().value!);

/** What the dashboard shows of a saved entry besides its blocks (the index itself never reads it). */
export type SavedEntryAbout = Omit<SavedEntryView, 'entry'>;

/**
 * Exact: a mirror of each (replica, slot)'s held blocks and of each (replica, saved entry)'s. Every held path
 * is also in one of two radix trees over all replicas (prefix-tree.ts: slots, saved entries), so a decision
 * walks the prompt once for all its candidates: the runs found hold for that prompt (its block list, by
 * identity) until the index changes or another prompt is asked. Per replica and tier, which saved entries
 * hold each block names the entry a run ends in.
 */
export class ExactPrefixIndex implements PrefixIndex {
  private readonly slots = new Map<number, Map<number, readonly number[]>>();
  private readonly saved = new Map<number, Map<number, { tier: PrefixTier; blocks: readonly number[]; about: SavedEntryAbout }>>();
  /** Per replica and tier: which saved entries hold each block. */
  private readonly savedHolders = new Map<number, Record<PrefixTier, Holders>>();
  private readonly slotTree = new PrefixTree();
  private readonly savedTree = new PrefixTree();
  private blocks = 0;
  /** Bumped by every change: the runs kept for a prompt hold while it has not moved. */
  private version = 0;
  /** The prompt the trees were last walked along, and the index's version then. */
  private walked: { blocks: readonly number[]; version: number } | null = null;

  /** The slot now holds exactly these leading blocks (replacing what it held). */
  setSlot(replica: number, slot: number, blocks: readonly number[]): void {
    let slots = this.slots.get(replica);
    if (!slots) this.slots.set(replica, (slots = new Map()));
    const before = slots.get(slot) ?? [];
    this.blocks += blocks.length - before.length;
    this.slotTree.remove(replica, before);
    this.slotTree.add(replica, blocks);
    slots.set(slot, blocks);
    this.version++;
  }

  /** The blocks the slot holds (none when not known). */
  slotBlocks(replica: number, slot: number): readonly number[] {
    return this.slots.get(replica)?.get(slot) ?? [];
  }

  /** The slot kept only its first `keep` blocks (it started a request that diverges there). */
  truncateSlot(replica: number, slot: number, keep: number): void {
    const held = this.slots.get(replica)?.get(slot);
    if (held && held.length > keep) this.setSlot(replica, slot, held.slice(0, keep));
  }

  /**
   * After a rebuild: the replica's slots are now exactly `moves` (slot `from` is slot `to`, keeping its
   * first `keepBlocks` blocks); every other slot of the replica is forgotten, and so is its prefix cache
   * (the engine discards saved states at a rebuild: they belong to the old context).
   */
  remapSlots(replica: number, moves: readonly { from: number; to: number; keepBlocks: number }[]): void {
    const before = this.slots.get(replica) ?? new Map<number, readonly number[]>();
    this.forgetReplica(replica);
    for (const { from, to, keepBlocks } of moves) {
      const held = before.get(from);
      if (held) this.setSlot(replica, to, held.slice(0, keepBlocks));
    }
  }

  /** The engine saved slot `slot`'s first `keepBlocks` blocks as prefix-cache entry `entry`, in `tier`. */
  saveSlot(
    replica: number,
    slot: number,
    entry: number,
    tier: PrefixTier,
    keepBlocks: number,
    about: SavedEntryAbout = { tokens: 0, bytes: 0, conversationId: null },
  ): void {
    this.saveBlocks(replica, entry, tier, this.slots.get(replica)?.get(slot)?.slice(0, keepBlocks) ?? [], about);
  }

  /** The replica saved these blocks as prefix-cache entry `entry`, in `tier` (a slot as it was when saved). */
  saveBlocks(replica: number, entry: number, tier: PrefixTier, held: readonly number[], about: SavedEntryAbout): void {
    let saved = this.saved.get(replica);
    if (!saved) this.saved.set(replica, (saved = new Map()));
    this.moveSaved(replica, entry, null);
    saved.set(entry, { tier, blocks: held, about });
    this.blocks += held.length;
    this.savedTree.add(replica, held);
    let holders = this.savedHolders.get(replica);
    if (!holders) this.savedHolders.set(replica, (holders = { ram: new Map(), disk: new Map() }));
    addHolder(holders[tier], held, entry);
    this.version++;
  }

  /** A saved entry moved to `tier`, or left the cache (`null`: dropped, or restored into a slot). */
  moveSaved(replica: number, entry: number, tier: PrefixTier | null): void {
    const saved = this.saved.get(replica);
    const known = saved?.get(entry);
    if (!saved || !known) return;
    this.version++;
    const holders = this.savedHolders.get(replica)!;
    removeHolder(holders[known.tier], known.blocks, entry);
    if (tier) {
      saved.set(entry, { ...known, tier });
      addHolder(holders[tier], known.blocks, entry);
      return;
    }
    this.blocks -= known.blocks.length;
    this.savedTree.remove(replica, known.blocks);
    saved.delete(entry);
  }

  /** The replica's saved entries in `tier`, oldest saved first (for the dashboard). */
  savedEntries(replica: number, tier: PrefixTier): SavedEntryView[] {
    return [...(this.saved.get(replica) ?? [])].flatMap(([entry, saved]) => (saved.tier === tier ? [{ entry, ...saved.about }] : []));
  }

  matchedBlocks(replica: number, blocks: readonly number[]): number {
    this.walk(blocks);
    return this.slotTree.run(replica);
  }

  matchedSaved(replica: number, blocks: readonly number[], tiers?: readonly PrefixTier[]): SavedMatch | null {
    const holders = this.savedHolders.get(replica);
    if (!holders) return null;
    // The longest run of the prompt's leading blocks some entry (in `tiers`) holds: the tree's walk holds every tier's
    // entries, a tier filter probes the holder maps. Then an entry holding its last block, RAM first.
    this.walk(blocks);
    const run = tiers ? leadingRun(blocks.length, (b) => tiers.some((tier) => holders[tier].has(blocks[b]!))) : this.savedTree.run(replica);
    if (run === 0) return null;
    for (const tier of PREFIX_TIERS) {
      const entries = !tiers || tiers.includes(tier) ? holders[tier].get(blocks[run - 1]!) : undefined;
      if (entries !== undefined) return { blocks: run, tier, entry: anyOf(entries) };
    }
    return null;
  }

  forgetReplica(replica: number): void {
    for (const held of this.slots.get(replica)?.values() ?? []) {
      this.blocks -= held.length;
      this.slotTree.remove(replica, held);
    }
    for (const entry of this.saved.get(replica)?.values() ?? []) {
      this.blocks -= entry.blocks.length;
      this.savedTree.remove(replica, entry.blocks);
    }
    this.slots.delete(replica);
    this.saved.delete(replica);
    this.savedHolders.delete(replica);
    this.version++;
  }

  get size(): number {
    return this.blocks;
  }

  /** Walks both trees along `blocks`, once per prompt while the index has not changed. */
  private walk(blocks: readonly number[]): void {
    if (this.walked?.blocks === blocks && this.walked.version === this.version) return;
    this.slotTree.walk(blocks);
    this.savedTree.walk(blocks);
    this.walked = { blocks, version: this.version };
  }
}

export const ESTIMATED_INDEX_CAPACITY = 262_144;

/** Estimated: block → replicas that were sent it, least recently noted blocks evicted past the cap. */
export class EstimatedPrefixIndex implements PrefixIndex {
  // A Map keeps insertion order; re-inserting on each use makes its first key the least recently used.
  private readonly holders = new Map<number, Set<number>>();

  constructor(private readonly capacity = ESTIMATED_INDEX_CAPACITY) {}

  noteServed(replica: number, blocks: readonly number[]): void {
    for (const block of blocks) {
      const set = this.holders.get(block) ?? new Set<number>();
      this.holders.delete(block);
      set.add(replica);
      this.holders.set(block, set);
    }
    while (this.holders.size > this.capacity) this.holders.delete(this.holders.keys().next().value!);
  }

  matchedBlocks(replica: number, blocks: readonly number[]): number {
    let i = 0;
    while (i < blocks.length && this.holders.get(blocks[i]!)?.has(replica)) i++;
    return i;
  }

  matchedSaved(): SavedMatch | null {
    return null;
  }

  forgetReplica(replica: number): void {
    for (const [block, set] of this.holders) {
      set.delete(replica);
      if (set.size === 0) this.holders.delete(block);
    }
  }

  get size(): number {
    return this.holders.size;
  }
}
