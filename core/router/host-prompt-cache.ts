/**
 * A mirror of a llama-server child's host-memory prompt cache (`--cache-ram`, llama.cpp PR 16391), kept
 * from what core sees of each request: the slot that served it, what that slot held before, and how many
 * prompt tokens it kept (`cache_n`). llama-server saves a slot's tokens to host RAM when another
 * conversation takes the slot, and loads them back into a slot when that conversation returns; the reply
 * only says a prefix was reused. Without the mirror the index forgets a conversation as soon as its slot is
 * taken, so with several llama-server replicas its next turn went to whichever replica tied, where nothing
 * held it. With it, the router counts the entry at a restore's cost, as it does a node-llama-cpp engine's
 * prefix cache. Written by hand because it is the routing product: it copies llama-server's rules
 * (tools/server/server-context.cpp `get_available_slot`, server-task.cpp `server_prompt_cache`, at the
 * commit node-llama-cpp 3.21.1 bundles):
 * - A request takes a slot whose tokens it keeps little of — no idle slot shared more than 10% of its
 *   prompt (so the least recently used was taken), or it keeps under half of the slot's tokens: the slot's
 *   tokens are saved, unless an entry already holds them all; entries they contain are dropped. The index
 *   counts whole 64-token blocks, so the shares are known to a block's width: a save is mirrored only where
 *   llama-server makes it at every length within that width (never an entry it may not have).
 * - Then the entry sharing most of the prompt, and at least a quarter of itself, is loaded into the slot
 *   and leaves the cache. The mirror does not guess this: the reply's `cache_n` above what the slot shared
 *   says one was loaded, and the entry sharing that much of the prompt (else the most) is taken out.
 * - Past the byte budget the oldest entries go; an entry larger than the budget is not kept.
 * Not mirrored, so the budget is counted less a copy of every slot: llama-server also copies idle slots
 * into the cache after each task (`--cache-idle-slots`), what the slots hold, which the index sees.
 * Known to drift: requests finishing on two slots of one replica in another order than they took them
 * (a save is mirrored at the reply's end) can leave an entry llama-server already loaded, until a longer
 * one contains it; a cancelled request's reply names no slot, so what it did is not mirrored; a prompt
 * for which llama-server picks a slot by similarity and keeps half of it or more (a long shared system
 * prompt against a short history) loads nothing, while the router may have counted a restore there.
 */
import { LLAMA_SERVER_SLOT_PROMPT_SIMILARITY, type HostPromptCacheLimits, type TierMove } from '../../common/prefix-cache.js';
import { BLOCK_TOKENS } from './block-hash.js';
import { sharedBlocks } from './block-hash.js';

/** What one served request did to the cache, in the words a node-llama-cpp engine's `started` report uses. */
export interface HostPromptCacheMoves {
  /**
   * In the order they happened: entries that left the cache (`tier: null`; contained in the saved one, or
   * the oldest past the budget), then the slot's previous blocks saved as a RAM entry.
   */
  readonly moves: readonly TierMove[];
  /** The entry loaded into the slot, which left the cache. */
  readonly restored: { readonly entry: number } | null;
}

/** A slot picked by similarity saves its tokens only when the prompt keeps less than this share of them. */
const SAVE_BELOW_KEPT_SHARE = 0.5;

export class HostPromptCacheMirror {
  /** Oldest first, as llama-server keeps them. */
  private readonly entries: { entry: number; blocks: readonly number[] }[] = [];
  private nextEntry = 0;

  constructor(private readonly limits: HostPromptCacheLimits) {}

  /**
   * A request with these prompt blocks (`promptTokens` tokens) was served on `slot`, which held `before`,
   * and kept `reusedTokens` of its prompt.
   */
  served(slot: number, before: readonly number[], prompt: readonly number[], promptTokens: number, reusedTokens: number): HostPromptCacheMoves {
    const shared = sharedBlocks(before, prompt);
    // Blocks floor tokens: the prompt may share up to a block's width more with the slot than `shared` says.
    // A save is mirrored only where llama-server makes it at every length the blocks allow.
    const mostShared = shared * BLOCK_TOKENS + BLOCK_TOKENS - 1;
    const leastSimilar = mostShared / Math.max(1, promptTokens) <= LLAMA_SERVER_SLOT_PROMPT_SIMILARITY;
    const keepsLittle = mostShared / (before.length * BLOCK_TOKENS) < SAVE_BELOW_KEPT_SHARE;
    const takesSlot = before.length > 0 && (leastSimilar || keepsLittle);
    const moves = takesSlot ? this.save(slot, before) : [];
    let restored: HostPromptCacheMoves['restored'] = null;
    const reusedBlocks = Math.floor(reusedTokens / BLOCK_TOKENS);
    if (reusedBlocks > shared) {
      // The entry loaded shares with the prompt what the reply says was kept; failing one, the one sharing most.
      let best = -1;
      let bestBlocks = shared;
      for (let at = 0; at < this.entries.length; at++) {
        const blocks = sharedBlocks(this.entries[at]!.blocks, prompt);
        if (blocks === reusedBlocks) {
          best = at;
          break;
        }
        if (blocks > bestBlocks) [best, bestBlocks] = [at, blocks];
      }
      if (best >= 0) restored = { entry: this.entries.splice(best, 1)[0]!.entry };
    }
    return { moves, restored };
  }

  /** Saves `slot`'s `blocks` as a new entry unless one holds them all; drops what it contains and the oldest past the budget. */
  private save(slot: number, blocks: readonly number[]): TierMove[] {
    if (this.entries.some((e) => sharedBlocks(e.blocks, blocks) === blocks.length)) return [];
    const bytes = this.bytesOf(blocks.length);
    if (bytes > this.limits.budgetBytes) return [];
    const gone: { entry: number }[] = [];
    for (let at = this.entries.length - 1; at >= 0; at--) {
      if (sharedBlocks(this.entries[at]!.blocks, blocks) === this.entries[at]!.blocks.length) gone.push(...this.entries.splice(at, 1));
    }
    while (this.entries.length && this.totalBytes() + bytes > this.limits.budgetBytes) gone.push(this.entries.shift()!);
    const entry = this.nextEntry++;
    this.entries.push({ entry, blocks });
    return [
      ...gone.map((e): TierMove => ({ entry: e.entry, tier: null })),
      { entry, tier: 'ram', fromSlot: slot, tokens: blocks.length * BLOCK_TOKENS, bytes },
    ];
  }

  private bytesOf(blocks: number): number {
    return blocks * BLOCK_TOKENS * this.limits.bytesPerToken;
  }

  private totalBytes(): number {
    return this.entries.reduce((sum, e) => sum + this.bytesOf(e.blocks.length), 0);
  }
}
