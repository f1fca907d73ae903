/**
 * The prefix index (DESIGN §4): which replica holds which prompt prefix, as chained block hashes.
 * - Exact form, for local engines: each replica's slots are mirrored from the engine's replies (which
 *   slot served, how much it kept), so a slot reused for another conversation drops the blocks it lost.
 * - Estimated form, for replicas whose cache cannot be seen: blocks noted as served, LRU-capped.
 * Either form answers how many leading blocks of a prompt a replica holds.
 */

export interface PrefixIndex {
  /** Leading blocks of `blocks` that `replica` holds. */
  matchedBlocks(replica: number, blocks: readonly number[]): number;
  /** Forget everything of a replica (it restarted, unloaded, or dropped its cache). */
  forgetReplica(replica: number): void;
  /** Blocks held in all (for memory accounting and the dashboard). */
  readonly size: number;
}

/** Exact: a mirror of each (replica, slot)'s held blocks. */
export class ExactPrefixIndex implements PrefixIndex {
  private readonly slots = new Map<number, Map<number, readonly number[]>>();
  private blocks = 0;

  /** The slot now holds exactly these leading blocks (replacing what it held). */
  setSlot(replica: number, slot: number, blocks: readonly number[]): void {
    let slots = this.slots.get(replica);
    if (!slots) this.slots.set(replica, (slots = new Map()));
    this.blocks += blocks.length - (slots.get(slot)?.length ?? 0);
    slots.set(slot, blocks);
  }

  /** The slot kept only its first `keep` blocks (it started a request that diverges there). */
  truncateSlot(replica: number, slot: number, keep: number): void {
    const held = this.slots.get(replica)?.get(slot);
    if (held && held.length > keep) this.setSlot(replica, slot, held.slice(0, keep));
  }

  /**
   * After a rebuild: the replica's slots are now exactly `moves` (slot `from` is slot `to`, keeping its
   * first `keepBlocks` blocks); every other slot of the replica is forgotten.
   */
  remapSlots(replica: number, moves: readonly { from: number; to: number; keepBlocks: number }[]): void {
    const before = this.slots.get(replica) ?? new Map<number, readonly number[]>();
    this.forgetReplica(replica);
    for (const { from, to, keepBlocks } of moves) {
      const held = before.get(from);
      if (held) this.setSlot(replica, to, held.slice(0, keepBlocks));
    }
  }

  matchedBlocks(replica: number, blocks: readonly number[]): number {
    let best = 0;
    for (const held of this.slots.get(replica)?.values() ?? []) {
      const n = Math.min(held.length, blocks.length);
      let i = 0;
      while (i < n && held[i] === blocks[i]) i++;
      if (i > best) best = i;
    }
    return best;
  }

  forgetReplica(replica: number): void {
    for (const held of this.slots.get(replica)?.values() ?? []) this.blocks -= held.length;
    this.slots.delete(replica);
  }

  get size(): number {
    return this.blocks;
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
