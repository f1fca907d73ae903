/**
 * The slot files a llama-server child lends to the other llama-server replicas of its model and layout
 * (and restores itself when its own host-memory cache has lost them): after a reply, core saves the slot
 * that served it (`POST /slots/{id}?action=save`) to `lent-<entry>.bin` in the child's slot folder, so a
 * later turn of that conversation that finds this replica busy can be restored on a free one instead of
 * prefilled there again. llama-server's own prompt cache (`--cache-ram`) cannot be read from outside, so
 * this is the only way its KV state can follow a conversation to another child. The shelf keeps to a
 * byte budget (`engine.prefixCache.diskBytes`): a save drops the files it contains (an earlier turn of the
 * same conversation) and then the oldest past the budget. Written by hand: it is the routing product, and
 * the index must hear of every file made or dropped.
 *
 * A save is checked against what the slot held at the reply's end: llama-server defers a save while the
 * slot is busy, and a save that ran after another request took the slot holds that request's tokens, so a
 * save naming another count is thrown away. A borrower's restore loads what the file really holds and the
 * next request keeps only what it shares with it, so a wrong file costs speed, never an answer.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BLOCK_TOKENS } from '../router/block-hash.js';
import { sharedBlocks } from '../router/block-hash.js';
import type { SlotStateResult } from '../remote/completion-dialect.js';
import type { RemoteClient } from '../remote/remote-client.js';
import type { ShelvedSlot, SlotFileLender } from '../kind/replica-driver.js';

/**
 * The index keys a replica's saved entries by number, and a llama-server replica's RAM-tier entries (its
 * mirrored prompt cache) count from 0: slot files count from here so the two never meet.
 */
export const SLOT_FILE_ENTRY_BASE = 2 ** 30;

/** The file in the owner's slot folder that holds entry `entry`. */
export const slotFileName = (entry: number): string => `lent-${entry}.bin`;

/** A save or restore copies a slot's KV state; a child that has not answered in this long is left to its hang check. */
export const SLOT_FILE_TIMEOUT_MS = 30_000;

/** What the child does with its slot files: its RemoteClient's slot actions. */
export type SlotFileActions = Pick<RemoteClient, 'slotAction'>;

/**
 * One replica's shelf, for the life of its slot folder: each child started there is served in turn (`serve`),
 * and a restart clears the last one's files (`clear`). Entry numbers go on across children, so a hint made
 * before a restart never names a file of the new child's.
 */
export class SlotFileShelf implements SlotFileLender {
  /** Oldest first. */
  private readonly files: { entry: number; blocks: readonly number[]; bytes: number }[] = [];
  private nextEntry = SLOT_FILE_ENTRY_BASE;
  /** The ready child whose slots it saves; null between children (a save still in flight for the last one then keeps nothing). */
  private child: SlotFileActions | null = null;

  constructor(
    readonly folder: string,
    readonly budgetBytes: number,
  ) {}

  /** Saves the slots of `child`, the child now ready in the folder. */
  serve(child: SlotFileActions): void {
    this.child = child;
  }

  /**
   * Saves `slot`, which held `heldTokens` tokens (these block hashes) when its reply ended; null when
   * nothing was kept: a file already holds them, the save failed, it caught another request's tokens, or
   * it is larger than the whole budget.
   */
  async save(slot: number, blocks: readonly number[], heldTokens: number): Promise<ShelvedSlot | null> {
    const child = this.child;
    if (!child || blocks.length === 0 || this.files.some((f) => sharedBlocks(f.blocks, blocks) === blocks.length)) return null;
    const entry = this.nextEntry++;
    let saved: SlotStateResult;
    try {
      saved = await child.slotAction(slot, 'save', slotFileName(entry), SLOT_FILE_TIMEOUT_MS);
    } catch {
      await this.remove(entry);
      return null;
    }
    // The reply's last token was sampled, never evaluated: the slot holds one fewer than the reply says.
    const caughtAnother = saved.tokens > heldTokens || saved.tokens < heldTokens - 1;
    if (this.child !== child || caughtAnother || saved.bytes > this.budgetBytes) {
      await this.remove(entry);
      return null;
    }
    const kept = blocks.slice(0, Math.floor(saved.tokens / BLOCK_TOKENS));
    const dropped: number[] = [];
    for (let at = this.files.length - 1; at >= 0; at--) {
      const file = this.files[at]!;
      if (sharedBlocks(file.blocks, kept) === file.blocks.length) dropped.push(...this.files.splice(at, 1).map((f) => f.entry));
    }
    this.files.push({ entry, blocks: kept, bytes: saved.bytes });
    while (this.totalBytes() > this.budgetBytes) dropped.push(this.files.shift()!.entry);
    await Promise.all(dropped.map((gone) => this.remove(gone)));
    return { entry, blocks: kept, tokens: saved.tokens, bytes: saved.bytes, dropped };
  }

  /** Removes every file (the child restarted: its files may not fit the new layout, and the index forgot them). */
  async clear(): Promise<void> {
    this.child = null;
    const all = this.files.splice(0).map((f) => f.entry);
    await Promise.all(all.map((entry) => this.remove(entry)));
  }

  private totalBytes(): number {
    return this.files.reduce((sum, f) => sum + f.bytes, 0);
  }

  private async remove(entry: number): Promise<void> {
    await rm(join(this.folder, slotFileName(entry)), { force: true }).catch(() => {});
  }
}
