/**
 * The tiered prefix cache of the engine child: when a request takes a slot whose conversation it would
 * drop, the slot's KV state is saved first (sequence-state.ts, as live resize saves it) into the RAM tier
 * (a Buffer in this process), spilling least recently used states to the disk tier (files under
 * `<diskDir>/engine-<pid>`); when a saved state shares a longer prefix with the prompt than the slot
 * does, it is loaded into the slot instead of prefilling, and the generation evaluates only the rest.
 * The bookkeeping is prefix-tiers.ts; this file does the I/O, one operation at a time, and collects the
 * moves that the next `started` message reports to core's exact index.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { PrefixCacheOptions, PrefixCacheReport, PrefixTier, TierMove } from '../common/prefix-cache.js';
import { PrefixTiers, type TierEntry } from './prefix-tiers.js';
import { loadSlotState, saveSlotState } from './sequence-state.js';
import type { Slot } from './slot.js';
import { commonPrefixLength } from './slot-choice.js';

/** Fewer tokens than this (one routing block) are cheaper to prefill again than to save and restore. */
export const MIN_CACHED_TOKENS = 64;

const ENGINE_DIR_PREFIX = 'engine-';

export class PrefixCache {
  private tiers = new PrefixTiers({ ramBytes: 0, diskBytes: 0 });
  /** The states of RAM-tier entries (and of entries being spilled). */
  private readonly ram = new Map<number, Buffer>();
  private dir: string | null = null;
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
    const dir = options && this.tiers.enabled ? join(options.diskDir ?? join(os.tmpdir(), 'manifold-prefix-cache'), `${ENGINE_DIR_PREFIX}${process.pid}`) : null;
    void this.serially(async () => {
      for (const entry of discarded) await this.discard(entry.id);
      if (dir !== this.dir && this.dir) await rm(this.dir, { recursive: true, force: true });
      if (dir && dir !== this.dir) await openDir(dir, this.log);
      this.dir = dir;
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

  /** What each tier holds, for the log and tests. */
  summary(): Record<PrefixTier, { entries: number; bytes: number }> {
    const of = (tier: PrefixTier) => ({ entries: this.tiers.list().filter((e) => e.tier === tier).length, bytes: this.tiers.bytesIn(tier) });
    return { ram: of('ram'), disk: of('disk') };
  }

  /** Discards every state and the disk tier's folder. */
  async dispose(): Promise<void> {
    this.use(undefined);
    await this.chain;
  }

  private async save(slot: Slot, held: readonly number[]): Promise<void> {
    const dir = this.dir!;
    const file = join(dir, 'saving.state');
    const bytes = await saveSlotState(slot, file, this.log, 'its conversation is not kept');
    if (bytes === null) return;
    const { entry, spill, drop } = this.tiers.admit(held, bytes);
    if (entry) {
      this.moves.push({ entry: entry.id, tier: entry.tier, fromSlot: slot.index, tokens: held.length });
      if (entry.tier === 'ram') this.ram.set(entry.id, await readFile(file));
      else await rename(file, this.diskFile(entry.id));
    }
    await rm(file, { force: true });
    for (const e of drop) {
      await this.discard(e.id);
      this.moves.push({ entry: e.id, tier: null });
    }
    for (const e of spill) await this.spill(e);
  }

  private async spill(entry: TierEntry): Promise<void> {
    try {
      await writeFile(this.diskFile(entry.id), this.ram.get(entry.id)!);
      this.moves.push({ entry: entry.id, tier: 'disk' });
    } catch (error) {
      this.log(`prefix cache: spilling entry ${entry.id} to disk failed (${(error as Error).message}); it is dropped`);
      this.tiers.take(entry.id);
      await rm(this.diskFile(entry.id), { force: true });
      this.moves.push({ entry: entry.id, tier: null });
    } finally {
      this.ram.delete(entry.id);
    }
  }

  private async restore(slot: Slot, entry: TierEntry): Promise<PrefixCacheReport['restored']> {
    const started = performance.now();
    this.tiers.take(entry.id);
    const state = this.ram.get(entry.id);
    const file = state ? join(this.dir!, 'restoring.state') : this.diskFile(entry.id);
    if (state) await writeFile(file, state);
    const loaded = await loadSlotState(slot, file, this.log, 'the prompt is evaluated instead');
    await this.discard(entry.id);
    if (state) await rm(file, { force: true });
    if (!loaded) {
      this.moves.push({ entry: entry.id, tier: null });
      return undefined;
    }
    return { entry: entry.id, tier: entry.tier, tokens: slot.sequence.nextTokenIndex, ms: performance.now() - started };
  }

  private async discard(id: number): Promise<void> {
    this.ram.delete(id);
    if (this.dir) await rm(this.diskFile(id), { force: true });
  }

  private diskFile(id: number): string {
    return join(this.dir!, `entry-${id}.state`);
  }

  private serially<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.chain.then(operation);
    this.chain = result.catch(() => {});
    return result;
  }
}

/** Makes the engine's disk-tier folder, removing those of engines that are gone (killed before they could). */
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
