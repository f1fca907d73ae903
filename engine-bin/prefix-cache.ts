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
 *
 * Under slot pressure (eviction-pressure.ts: at least half of the last grants evicted a conversation) the
 * state is saved as soon as a generation ends, while its slot is idle (`saveBehind`), instead of on the
 * way of the request that takes the slot next: that request finds it saved and goes straight to its
 * restore and prefill. The save's move is reported by the next request on the same slot, as an eviction's
 * save is, so core's mirror of the slot still holds what was saved when it reads it; a later request of
 * the same conversation on that slot drops the copy unreported.
 *
 * Each entry is self-describing, so another engine of the same model and context layout can borrow it
 * (a generate request's `borrow` hint, when core routes a turn to a replica other than the one that saved
 * its history): beside its state `entry-<id>.state` lies `entry-<id>.json`, its tokens and the layout it
 * was saved under. Both are immutable under their names: written under another name and renamed into
 * place (a rename is atomic), never rewritten, and an entry id is never reused by the engine that made it.
 */
import { existsSync } from 'node:fs';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { tokenIdsSchema } from '../common/token-ids.js';
import {
  PREFIX_CACHE_OFF,
  PREFIX_TIERS,
  type PrefixBorrow,
  type PrefixCacheOptions,
  type PrefixCacheShare,
  type PrefixCacheReport,
  type PrefixTier,
  type TierMove,
} from '../common/prefix-cache.js';
import { PrefixTiers, type TierEntry } from './prefix-tiers.js';
import { EvictionPressure } from './eviction-pressure.js';
import { loadSlotState, saveSlotState } from './sequence-state.js';
import type { Slot } from './slot.js';
import { commonPrefixLength } from './slot-choice.js';
import { parseJsonOr } from '../common/parse-json.js';

/** Fewer tokens than this (one routing block) are cheaper to prefill again than to save and restore. */
export const MIN_CACHED_TOKENS = 64;

const ENGINE_DIR_PREFIX = 'engine-';

/** An entry's sidecar: its tokens and the context layout its state was saved under (another engine loads it only under the same). */
const sidecarSchema = z.object({ layout: z.string(), tokens: tokenIdsSchema() });

export class PrefixCache {
  private tiers = new PrefixTiers(PREFIX_CACHE_OFF);
  /** Each tier's folder; null while the cache is off. */
  private dirs: Record<PrefixTier, string> | null = null;
  /** The folders `use` chose, at once (`dirs` follows when the folders are made); null while the cache is off. */
  private chosenDirs: Record<PrefixTier, string> | null = null;
  /** The model file and context layout the states are saved under (a borrowed state must match it). */
  private layout = '';
  private moves: TierMove[] = [];
  /** Saves made behind a generation, by slot, whose move waits for the next request on that slot. */
  private readonly behind = new Map<number, TierMove>();
  private readonly pressure = new EvictionPressure();
  /** State I/O runs one operation at a time, in order. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Test-only: how long each save waits before it starts (`testOnlyFaults.delayPrefixSaveMs`). */
  private saveDelayMs = 0;

  constructor(private readonly log: (line: string) => void) {}

  /**
   * The cache for a new context (a load or a rebuild's allocation), or none (`undefined`): every saved
   * state is discarded (llama.cpp refuses states of another context layout; core forgets them at the remap).
   */
  use(options: PrefixCacheOptions | undefined, layout = '', saveDelayMs = 0): void {
    const discarded = this.tiers.clear();
    this.layout = layout;
    this.saveDelayMs = saveDelayMs;
    this.tiers = new PrefixTiers(options ?? PREFIX_CACHE_OFF, this.tiers.idAfter);
    this.moves = [];
    this.behind.clear();
    this.pressure.reset();
    const engineDir = (root: string): string => join(root, `${ENGINE_DIR_PREFIX}${process.pid}`);
    const dirs =
      options && this.tiers.enabled ? { ram: engineDir(RAM_ROOT), disk: engineDir(options.diskDir ?? join(os.tmpdir(), 'manifold-prefix-cache')) } : null;
    this.chosenDirs = dirs;
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

  /** What a borrower needs while the cache is on (the ready info reports it); undefined when off. */
  get share(): PrefixCacheShare | undefined {
    return this.chosenDirs ? { dirs: this.chosenDirs, layout: this.layout } : undefined;
  }

  /**
   * Before a generation on `slot`: saves what the slot would lose of its tokens, and restores a saved
   * state when it holds more of `prompt` than the slot does — its own, or `borrow`'s (another engine's)
   * when that holds more still. Never fails (a failed save keeps nothing, a failed restore leaves the slot
   * empty, a borrow that cannot be had is prefilled); what it did, for `started`, or undefined when nothing.
   */
  prepare(slot: Slot, prompt: readonly number[], borrow?: PrefixBorrow): Promise<PrefixCacheReport | undefined> {
    if (!this.tiers.enabled) return Promise.resolve(undefined);
    return this.serially(async () => {
      const held = [...slot.tokens];
      // The generation keeps at most all but the prompt's last token (it evaluates that one).
      const usable = prompt.length - 1;
      const kept = Math.min(commonPrefixLength(held, prompt), usable);
      const match = this.tiers.longestMatch(prompt);
      const own = match ? Math.min(match.commonPrefix, usable) : 0;
      const lent = borrow ? await this.borrowable(borrow, prompt) : null;
      const borrowing = lent !== null && Math.min(lent.commonPrefix, usable) >= Math.max(kept + MIN_CACHED_TOKENS, own + 1);
      const from = match && own >= kept + MIN_CACHED_TOKENS ? match.entry : null;
      const evicts = held.length - kept >= MIN_CACHED_TOKENS;
      this.pressure.note(evicts);
      const savedBehind = this.behind.get(slot.index);
      this.behind.delete(slot.index);
      // Saved behind the slot's last generation and not evicted after all: the slot keeps it, the copy goes.
      if (savedBehind && !evicts) await this.dropUnreported(savedBehind.entry);
      else if (savedBehind) this.moves.unshift(savedBehind);
      if (evicts && !this.tiers.refresh(held)) await this.save(slot, held);
      // A borrow that cannot be had falls back to the engine's own entry, if any.
      const restored = (borrowing ? await this.restoreBorrowed(slot, borrow!) : undefined) ?? (from ? await this.restore(slot, from) : undefined);
      const moves = this.moves;
      this.moves = [];
      return moves.length || restored ? { moves, ...(restored ? { restored } : {}) } : undefined;
    }).catch((error: unknown) => {
      this.log(`prefix cache: ${(error as Error).message}`);
      return undefined;
    });
  }

  /**
   * After a generation on `slot` ends, under slot pressure: saves what the slot holds while it is idle (see
   * the file's comment). Skipped when the slot was taken again meanwhile (that request's `prepare` saves
   * what it evicts) or what it holds is saved already. Never fails.
   */
  saveBehind(slot: Slot): void {
    if (!this.tiers.enabled || !this.pressure.high) return;
    void this.serially(async () => {
      // Taken again meanwhile, or the cache turned off or its context gone (a dispose, a rebuild).
      if (slot.state !== 'idle' || !this.tiers.enabled || slot.sequence.disposed) return;
      const held = [...slot.tokens];
      if (held.length >= MIN_CACHED_TOKENS && !this.tiers.refresh(held)) await this.save(slot, held, 'behind');
    }).catch((error: unknown) => this.log(`prefix cache: ${(error as Error).message}`));
  }

  /** When the state I/O asked for so far is over. */
  settled(): Promise<void> {
    return this.chain.then(() => undefined);
  }

  /** Discards every state and the disk tier's folder. */
  async dispose(): Promise<void> {
    this.use(undefined);
    await this.chain;
  }

  /** `behind`: the save's move waits for the next request on the slot (saveBehind). */
  private async save(slot: Slot, held: readonly number[], when: 'evicting' | 'behind' = 'evicting'): Promise<void> {
    if (this.saveDelayMs) await delay(this.saveDelayMs);
    const saving = join(this.dirs!.ram, 'saving.state');
    const bytes = await saveSlotState(slot, saving, this.log, 'its conversation is not kept');
    if (bytes === null) return;
    const { entry, spill, drop } = this.tiers.admit(held, bytes);
    if (entry) {
      const move: TierMove = { entry: entry.id, tier: entry.tier, fromSlot: slot.index, tokens: held.length, bytes };
      if (when === 'behind') this.behind.set(slot.index, move);
      else this.moves.push(move);
      // The sidecar first: a state in place always has its sidecar beside it.
      const sidecar = `${saving}.json`;
      await writeFile(sidecar, JSON.stringify({ layout: this.layout, tokens: held }));
      await moveFile(sidecar, this.sidecar(entry.id, entry.tier));
      await moveFile(saving, this.file(entry.id, entry.tier));
    }
    await rm(saving, { force: true });
    for (const e of drop) {
      await this.discard(e);
      this.record({ entry: e.id, tier: null });
    }
    for (const e of spill) await this.spill(e);
  }

  /** Moves a state from RAM to disk (the bookkeeping has already put its entry there). */
  private async spill(entry: TierEntry): Promise<void> {
    try {
      await moveFile(this.sidecar(entry.id, 'ram'), this.sidecar(entry.id, 'disk'));
      await moveFile(this.file(entry.id, 'ram'), this.file(entry.id, 'disk'));
      this.record({ entry: entry.id, tier: 'disk' });
    } catch (error) {
      this.log(`prefix cache: spilling entry ${entry.id} to disk failed (${(error as Error).message}); it is dropped`);
      this.tiers.take(entry.id);
      await this.discard(entry);
      this.record({ entry: entry.id, tier: null });
    }
  }

  private async restore(slot: Slot, entry: TierEntry): Promise<PrefixCacheReport['restored']> {
    const started = performance.now();
    this.tiers.take(entry.id);
    const loaded = await loadSlotState(slot, this.file(entry.id, entry.tier), this.log, 'the prompt is evaluated instead');
    await this.discard(entry);
    // Core hears of a restored entry's end from `restored`; one saved behind and never reported, of nothing.
    const unreported = this.slotSavedBehind(entry.id);
    if (unreported !== undefined) this.behind.delete(unreported);
    else if (!loaded) this.moves.push({ entry: entry.id, tier: null });
    if (!loaded) return undefined;
    return { entry: entry.id, tier: entry.tier, tokens: slot.sequence.nextTokenIndex, ms: performance.now() - started };
  }

  /**
   * The tokens of `borrow`'s entry when it was saved under this engine's layout by a sibling engine (its
   * folders beside this engine's own: no hint makes the engine read other files); null when it cannot be
   * read (gone already), or was saved under another layout.
   */
  private async borrowable(borrow: PrefixBorrow, prompt: readonly number[]): Promise<{ commonPrefix: number } | null> {
    if (!this.dirs || !PREFIX_TIERS.every((tier) => isSibling(borrow.dirs[tier], this.dirs![tier]))) return null;
    for (const tier of tiersFrom(borrow.tier)) {
      const read = await readFile(entryFiles(borrow.dirs[tier], borrow.entry).sidecar, 'utf8').catch(() => null);
      const sidecar = read === null ? null : sidecarSchema.safeParse(parseJsonOr(read, null));
      if (sidecar?.success) return sidecar.data.layout === this.layout ? { commonPrefix: commonPrefixLength(sidecar.data.tokens, prompt) } : null;
    }
    return null;
  }

  /**
   * Loads another engine's entry into `slot`. Race-safe without any lock between the engines: the owner
   * may drop, spill or restore (and so delete) its entry at any moment, but never changes a file under
   * its name (states and sidecars are renamed into place whole, ids are not reused). A hard link is
   * atomic: it either fails (the name is gone: we prefill, as without a hint) or gives this engine its own
   * name for the same whole file, which the owner's later unlink cannot take away. Each tier's folders of
   * all engines share one parent (one file system), so the link is made in this engine's folder of the
   * same tier; the entry is tried in the tier core last heard of, then in the other (a spill in between).
   */
  private async restoreBorrowed(slot: Slot, borrow: PrefixBorrow): Promise<PrefixCacheReport['restored']> {
    const started = performance.now();
    for (const tier of tiersFrom(borrow.tier)) {
      const linked = join(this.dirs![tier], `borrowed-${basename(borrow.dirs[tier])}-${borrow.entry}.state`);
      await rm(linked, { force: true });
      const had = await link(entryFiles(borrow.dirs[tier], borrow.entry).state, linked).then(
        () => true,
        () => false,
      );
      if (!had) continue;
      const loaded = await loadSlotState(slot, linked, this.log, 'the prompt is evaluated instead');
      await rm(linked, { force: true });
      return loaded ? { entry: borrow.entry, tier, tokens: slot.sequence.nextTokenIndex, ms: performance.now() - started, borrowed: true } : undefined;
    }
    this.log(`prefix cache: borrowed entry ${borrow.entry} of ${basename(borrow.dirs.ram)} is gone; the prompt is evaluated instead`);
    return undefined;
  }

  /** A move of an entry: to be reported, or, for an entry saved behind and not reported yet, folded into its save's move. */
  private record(move: TierMove): void {
    const slot = this.slotSavedBehind(move.entry);
    if (slot === undefined) this.moves.push(move);
    else if (move.tier === null) this.behind.delete(slot);
    else this.behind.set(slot, { ...this.behind.get(slot)!, tier: move.tier });
  }

  /** The slot whose unreported save behind made `entry`, if any. */
  private slotSavedBehind(entry: number): number | undefined {
    for (const [slot, move] of this.behind) if (move.entry === entry) return slot;
    return undefined;
  }

  /** Forgets an entry core never heard of, and its files. */
  private async dropUnreported(id: number): Promise<void> {
    const entry = this.tiers.take(id);
    if (entry) await this.discard(entry);
  }

  /** Removes an entry's state and sidecar from both tiers (a spill in progress may have left them in either). */
  private async discard(entry: TierEntry): Promise<void> {
    if (!this.dirs) return;
    for (const tier of PREFIX_TIERS) {
      await rm(this.file(entry.id, tier), { force: true });
      await rm(this.sidecar(entry.id, tier), { force: true });
    }
  }

  private file(id: number, tier: PrefixTier): string {
    return entryFiles(this.dirs![tier], id).state;
  }

  private sidecar(id: number, tier: PrefixTier): string {
    return entryFiles(this.dirs![tier], id).sidecar;
  }

  private serially<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.chain.then(operation);
    this.chain = result.catch(() => {});
    return result;
  }
}

/** Where the RAM tier's files live: memory-backed `/dev/shm` where there is one, else the temp folder. */
const RAM_ROOT = join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'manifold-prefix-ram');

/** An entry's files in a tier folder: its KV state and its sidecar. */
function entryFiles(dir: string, id: number): { state: string; sidecar: string } {
  return { state: join(dir, `entry-${id}.state`), sidecar: join(dir, `entry-${id}.json`) };
}

/** The tier core named first, then the other. */
function tiersFrom(tier: PrefixTier): PrefixTier[] {
  return [tier, ...PREFIX_TIERS.filter((t) => t !== tier)];
}

/** Whether `dir` is another engine's folder beside `own` (same parent, `engine-<pid>`). */
function isSibling(dir: string, own: string): boolean {
  return dir !== own && dirname(dir) === dirname(own) && /^engine-\d+$/.test(basename(dir));
}

/**
 * Renames `from` to `to`, copying when they are on different file systems (RAM and disk tiers) — to a
 * temporary name renamed into place, so `to` never names part of a file (a borrower may link it any time).
 */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, `${to}.part`);
    await rename(`${to}.part`, to);
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
