/**
 * A llama-server replica restoring a lent slot file (slot-file-shelf.ts) into the slot core pinned a request
 * to, before that request is sent there: a generate request's borrow hint names the entry and its owner's
 * slot folder, its own or another llama-server replica's of the same model and layout. llama-server restores
 * only from its own `--slot-save-path`, so the file is hard-linked there first under a name of its own
 * (copied where the two folders are on different file systems) and the link removed after: the owner may
 * drop its file meanwhile without failing the restore. The request then keeps what it shares with the
 * restored tokens. A hint is only a hint: a file gone meanwhile or a failed restore (which empties the slot)
 * restores nothing, and the request is prefilled.
 */
import { copyFile, link, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { PrefixBorrow, PrefixRestoreReport } from '../../common/prefix-cache.js';
import { SLOT_FILE_TIMEOUT_MS, slotFileName, type SlotFileActions } from './slot-file-shelf.js';

let nextLink = 0;

/** Restores the hint's file into slot `slot` of the child whose slot folder is `ownFolder`: the restore as a `started` report names it, or null. */
export async function restoreSlotFile(child: SlotFileActions, borrow: PrefixBorrow, slot: number, ownFolder: string): Promise<PrefixRestoreReport | null> {
  const linked = join(ownFolder, `borrowed-${nextLink++}.bin`);
  try {
    const source = join(borrow.dirs.disk, slotFileName(borrow.entry));
    await link(source, linked).catch(() => copyFile(source, linked));
    const result = await child.slotAction(slot, 'restore', basename(linked), SLOT_FILE_TIMEOUT_MS);
    return { entry: borrow.entry, tier: borrow.tier, tokens: result.tokens, ms: result.ms, borrowed: true };
  } catch {
    return null;
  } finally {
    await rm(linked, { force: true }).catch(() => {});
  }
}
