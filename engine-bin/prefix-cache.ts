/**
 * The tiered prefix cache of the engine child: when a request takes a slot whose conversation it would
 * drop, the slot's KV state is saved first (sequence-state.ts, as live resize saves it) into the RAM tier,
 * spilling least recently used states to the disk tier (files under `<diskDir>/engine-<pid>`); when a
 * saved state shares a longer prefix with the prompt than the slot does, it is loaded into the slot
 * instead of prefilling, and the generation evaluates only the rest. node-llama-cpp saves and loads states
 * only as files, so the RAM tier is files in memory: `/dev/shm` where it exists (Linux), else the temp
 * folder (its page cache). Holding them as Buffers in this process was measured slower: the copy in and
 * out cost ~45 ms per 10 MB state against ~4 ms to load it from a file. The bookkeeping is prefix-tiers.ts;
 * this file does the I/O, one operation at a time, and collects the moves that the next `started` message
 * reports to core's exact index.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { PREFIX_TIERS, type PrefixCacheOptions, type PrefixCacheReport, type PrefixTier, type TierMove } from '../common/prefix-cache.js';
import { PrefixTiers, type TierEntry } from './prefix-tiers.js';
import { loadSlotState, saveSlotState } from './sequence-state.js';
import type { Slot } from './slot.js';
import { commonPrefixLength } from './slot-choice.js';

/** Fewer tokens than this (one routing block) are cheaper to prefill again than to save and restore. */
export const MIN_CACHED_TOKENS = 64;

const ENGINE_DIR_PREFIX = 'engine-';

export class PrefixCache {
  private tiers = new PrefixTiers({ ramBytes: 0, diskBytes: 0 });
  /** Each tier's folder; null while the cache is off. */
  private dirs: Record<PrefixTier, string> | null = null;
  private moves: TierMove[] = [];
  /** State I/O runs one operation at a time, in order. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly log: (line: string) => void) {}

  /**
   * The cache for a new context (a load or a rebuild's allocation), or none (`undefined`): every saved
   * state is discarded (llama.cpp refuses states of another context layout; core forgets them at the remap).
   */
  use(options: PrefixCacheOptions | undefined): void {
    const discarded = this.tiers.clear();
    this.tiers = new PrefixTiers(options ?? { ramBytes: 0, diskBytes: 0 }, this.tiers.idAfter);
    this.moves = [];
    const engineDir = (root: string): string => join(root, `${ENGINE_DIR_PREFIX}${process.pid}`);
    const dirs = options && this.tiers.enabled ? { ram: engineDir(RAM_ROOT), disk: engineDir(options.diskDir ?? join(os.tmpdir(), 'manifold-prefix-cache')) } : null;
    void this.serially(async () => {
      for (const entry of discarded) await this.discard(entry);
      const before = this.dirs;
      if (before?.ram !== dirs?.ram || before?.disk !== dirs?.disk) {
        for (const dir of before ? [before.ram, before.disk] : []) await rm(dir, { recursive: true, force: true });
        for (const dir of dirs ? [dirs.ram, dirs.disk] : []) await openDir(dir, this.log);
      }
      this.dirs = dirs;
    });
  }

  /**
   * Before a generation on `slot`: saves what the slot would lose of its tokens, and restores a saved
   * state when it holds more of `prompt` than the slot does. Never fails (a failed save keeps nothing, a
   * failed restore leaves the slot empty); what it did, for `started`, or undefined when nothing.
   */
  prepare(slot: Slot, prompt: readonly number[]): Promise<PrefixCacheReport | undefined> {
    if (!this.tiers.enabled) return Promise.resolve(undefined);
    return this.serially(async () => {
      const held = [...slot.tokens];
      // The generation keeps at most all but the prompt's last token (it evaluates that one).
      const usable = prompt.length - 1;
      const kept = Math.min(commonPrefixLength(held, prompt), usable);
      const match = this.tiers.longestMatch(prompt);
      const from = match && Math.min(match.commonPrefix, usable) >= kept + MIN_CACHED_TOKENS ? match.entry : null;
      if (held.length - kept >= MIN_CACHED_TOKENS) await this.save(slot, held);
      const restored = from ? await this.restore(slot, from) : undefined;
      const moves = this.moves;
      this.moves = [];
      return moves.length || restored ? { moves, ...(restored ? { restored } : {}) } : undefined;
    }).catch((error: unknown) => {
      this.log(`prefix cache: ${(error as Error).message}`);
      return undefined;
    });
  }

  /** Discards every state and the disk tier's folder. */
  async dispose(): Promise<void> {
    this.use(undefined);
    await this.chain;
  }

  private async save(slot: Slot, held: readonly number[]): Promise<void> {
    const saving = join(this.dirs!.ram, 'saving.state');
    const bytes = await saveSlotState(slot, saving, this.log, 'its conversation is not kept');
    if (bytes === null) return;
    const { entry, spill, drop } = this.tiers.admit(held, bytes);
    if (entry) {
      this.moves.push({ entry: entry.id, tier: entry.tier, fromSlot: slot.index, tokens: held.length, bytes });
      await moveFile(saving, this.file(entry.id, entry.tier));
    }
    await rm(saving, { force: true });
    for (const e of drop) {
      await this.discard(e);
      this.moves.push({ entry: e.id, tier: null });
    }
    for (const e of spill) await this.spill(e);
  }

  /** Moves a state from RAM to disk (the bookkeeping has already put its entry there). */
  private async spill(entry: TierEntry): Promise<void> {
    try {
      await moveFile(this.file(entry.id, 'ram'), this.file(entry.id, 'disk'));
      this.moves.push({ entry: entry.id, tier: 'disk' });
    } catch (error) {
      this.log(`prefix cache: spilling entry ${entry.id} to disk failed (${(error as Error).message}); it is dropped`);
      this.tiers.take(entry.id);
      await this.discard(entry);
      this.moves.push({ entry: entry.id, tier: null });
    }
  }

  private async restore(slot: Slot, entry: TierEntry): Promise<PrefixCacheReport['restored']> {
    const started = performance.now();
    this.tiers.take(entry.id);
    const loaded = await loadSlotState(slot, this.file(entry.id, entry.tier), this.log, 'the prompt is evaluated instead');
    await this.discard(entry);
    if (!loaded) {
      this.moves.push({ entry: entry.id, tier: null });
      return undefined;
    }
    return { entry: entry.id, tier: entry.tier, tokens: slot.sequence.nextTokenIndex, ms: performance.now() - started };
  }

  /** Removes an entry's state from both tiers (a spill in progress may have left it in either). */
  private async discard(entry: TierEntry): Promise<void> {
    if (!this.dirs) return;
    for (const tier of PREFIX_TIERS) await rm(this.file(entry.id, tier), { force: true });
  }

  private file(id: number, tier: PrefixTier): string {
    return join(this.dirs![tier], `entry-${id}.state`);
  }

  private serially<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.chain.then(operation);
    this.chain = result.catch(() => {});
    return result;
  }
}

/** Where the RAM tier's files live: memory-backed `/dev/shm` where there is one, else the temp folder. */
const RAM_ROOT = join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'manifold-prefix-ram');

/** Renames `from` to `to`, copying when they are on different file systems (RAM and disk tiers). */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, to);
    await rm(from, { force: true });
  }
}

/** Makes one of the engine's tier folders, removing those of engines that are gone (killed before they could). */
async function openDir(dir: string, log: (line: string) => void): Promise<void> {
  const parent = join(dir, '..');
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const pid = Number(name.slice(ENGINE_DIR_PREFIX.length));
    if (!name.startsWith(ENGINE_DIR_PREFIX) || !Number.isSafeInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    log(`prefix cache: removing ${name}, left by an engine that is gone`);
    await rm(join(parent, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
