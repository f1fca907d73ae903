/**
 * Pure unit tests of the slot files a llama-server child lends (no engine: the child's save is a stand-in
 * that writes a file of the size it is told and answers as llama-server does): what a save keeps, which
 * saves it throws away, what it drops, and the budget.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SLOT_FILE_ENTRY_BASE, SlotFileShelf, slotFileName } from '../../core/llama-server/slot-file-shelf.js';

const BYTES_PER_TOKEN = 100;

/** Blocks of a conversation: its system block 1, then its own. */
const blocks = (conversation: number, n: number) => [1, ...Array.from({ length: n - 1 }, (_, i) => conversation * 1000 + i)];

let folder: string;
/** What the stand-in child holds in each slot when a save runs (tokens), and the saves it was asked for. */
let held: Map<number, number>;
let failNext: boolean;
const child = {
  async slotAction(slot: number, _action: 'save', filename: string) {
    if (failNext) {
      failNext = false;
      throw new Error('Unable to save slot');
    }
    const tokens = held.get(slot) ?? 0;
    await writeFile(join(folder, filename), Buffer.alloc(tokens));
    return { tokens, bytes: tokens * BYTES_PER_TOKEN, ms: 1 };
  },
};
const files = async () => (await readdir(folder)).sort();
/** A shelf of `budgetBytes` in the folder, serving the stand-in child. */
const servingShelf = (budgetBytes: number): SlotFileShelf => {
  const shelf = new SlotFileShelf(folder, budgetBytes);
  shelf.serve(child);
  return shelf;
};

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'manifold-shelf-'));
  held = new Map();
  failNext = false;
});
afterEach(() => rm(folder, { recursive: true, force: true }));

describe('the slot files a llama-server child lends', () => {
  it('keeps a save of what the slot held at its reply, cut to the blocks the file holds (the last token is never evaluated)', async () => {
    const shelf = servingShelf(10 ** 9);
    held.set(2, 639);
    const saved = await shelf.save(2, blocks(1, 10), 640);
    expect(saved).toEqual({ entry: SLOT_FILE_ENTRY_BASE, blocks: blocks(1, 9), tokens: 639, bytes: 63_900, dropped: [] });
    expect(await files()).toEqual([slotFileName(SLOT_FILE_ENTRY_BASE)]);
    // The next child in the same folder numbers on from where the last one stopped.
    await shelf.clear();
    shelf.serve(child);
    held.set(0, 320);
    expect((await shelf.save(0, blocks(2, 5), 320))!.entry).toBe(SLOT_FILE_ENTRY_BASE + 1);
  });

  it('throws away a save that read another request’s tokens, and one that failed, removing the file', async () => {
    const shelf = servingShelf(10 ** 9);
    held.set(0, 900);
    expect(await shelf.save(0, blocks(1, 8), 540)).toBeNull();
    failNext = true;
    expect(await shelf.save(0, blocks(1, 8), 540)).toBeNull();
    expect(await files()).toEqual([]);
  });

  it('drops the files a save contains (an earlier turn of the conversation) and skips a save a file already holds', async () => {
    const shelf = servingShelf(10 ** 9);
    held.set(0, 320);
    const first = await shelf.save(0, blocks(1, 5), 320);
    held.set(1, 320);
    const other = await shelf.save(1, blocks(2, 5), 320);
    held.set(0, 640);
    const longer = await shelf.save(0, blocks(1, 10), 640);
    expect(longer!.dropped).toEqual([first!.entry]);
    expect(await files()).toEqual([slotFileName(other!.entry), slotFileName(longer!.entry)].sort());
    expect(await shelf.save(3, blocks(1, 6), 384)).toBeNull();
  });

  it('drops the oldest past its budget, and keeps nothing larger than the whole budget', async () => {
    const shelf = servingShelf(70_000);
    held.set(0, 320);
    const a = await shelf.save(0, blocks(1, 5), 320);
    const b = await shelf.save(0, blocks(2, 5), 320);
    expect(b!.dropped).toEqual([]);
    const c = await shelf.save(0, blocks(3, 5), 320);
    expect(c!.dropped).toEqual([a!.entry]);
    expect(await files()).toEqual([slotFileName(b!.entry), slotFileName(c!.entry)].sort());
    held.set(1, 800);
    expect(await shelf.save(1, blocks(4, 12), 800)).toBeNull();
  });

  it('removes every file when its child is gone, and a save still in flight then keeps nothing', async () => {
    const shelf = servingShelf(10 ** 9);
    held.set(0, 320);
    await shelf.save(0, blocks(1, 5), 320);
    const inFlight = shelf.save(0, blocks(2, 5), 320);
    await shelf.clear();
    expect(await inFlight).toBeNull();
    expect(await files()).toEqual([]);
  });
});
