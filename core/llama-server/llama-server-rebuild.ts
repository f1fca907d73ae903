/**
 * Live resize of a llama-server replica (DESIGN §5) as a restart of its child, offered to the rebuild
 * transaction as a node-llama-cpp engine's client offers its own operations:
 * - `precheck`: the cell cap, and the KV cache at the new sizes (from the GGUF's attention shape) against
 *   free RAM plus what the current cache gives back (weights and VRAM are not estimated: a child that
 *   cannot load them fails to start, which is a RolledBack);
 * - `activity`: the slots llama-server reports busy (`GET /slots`, prefill or decode) and the streams
 *   still open here (undrained);
 * - `rebuild`: every slot saved to the replica's slot folder (before the mark: a failure there is
 *   RejectedIntact), the mark, the child restarted at the new sizes, the prefixes brought back;
 * - `restore`: the child restarted at the old sizes and the prefixes brought back; when not even that
 *   comes up the replica set hears the child's exit and heals it.
 * Prefixes: with the same slot count and KV type each slot's file goes back into its own slot (a prefix
 * that does not fit the new slot is dropped). With another slot count or KV type llama.cpp refuses the files
 * (`--no-kv-unified` makes one KV stream per slot, and a file carries the stream count), so the longest
 * prefixes are evaluated again from the files' tokens into slots 0..n-1 before Applied is answered
 * (llama-server does not say when a slot was last used).
 */
import { formatBytes } from '../../common/format-bytes.js';
import os from 'node:os';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Activity, LoadOptionsInput, ReadyInfo, Rebuilt } from '../../common/engine-protocol.js';
import { readModelFileHeader } from '../../common/node/gguf-file.js';
import {
  changedSizes,
  MAX_CONTEXT_CELLS,
  touchedPools,
  type KeptPrefix,
  type Pool,
  type PoolSizes,
  type PrecheckVerdict,
  type PrefixReport,
  type RebuildChange,
} from '../../common/rebuild.js';
import { kvCacheBytes } from '../arena/engine-memory.js';
import type { RemoteClient } from '../remote/remote-client.js';
import type { SupervisorState } from '../supervisor/child-life.js';
import { readSlotFileTokens } from './slot-state-file.js';

/** A slot save, restore or refill may take this long (a state of a few GB is written or read). */
const SLOT_STATE_TIMEOUT_MS = 120_000;

interface SavedSlot {
  slot: number;
  tokens: number;
  file: string;
}

/** What a resize asks of the replica's llama-server supervisor (llama-server-supervisor.ts): a quiet restart at other sizes. */
export interface RestartableServer {
  readonly state: SupervisorState;
  readonly client: RemoteClient | undefined;
  readonly loadOptions: LoadOptionsInput;
  /** Where the child saves and restores slot files. */
  readonly slotFolder: string | undefined;
  /** The child is gone and its exit was announced. */
  readonly lost: boolean;
  restartWith(load: LoadOptionsInput): Promise<ReadyInfo>;
  announceDown(): void;
}

export class LlamaServerRebuild {
  /** The slots saved by the running transaction, non-empty ones only. */
  private saved: SavedSlot[] = [];

  constructor(
    private readonly supervisor: RestartableServer,
    /** The live sizes before the resize. */
    private readonly current: PoolSizes,
  ) {}

  /** True when the child is gone and the replica set has heard it (nothing of it is preserved). */
  isEngineLost(): boolean {
    return this.supervisor.lost;
  }

  async precheck(change: RebuildChange): Promise<PrecheckVerdict> {
    const pools = touchedPools(change);
    const next = changedSizes(this.current, change);
    const none = { ram: 0, vram: 0 };
    const cells = next.contextSize * next.slots;
    if (cells > MAX_CONTEXT_CELLS) {
      return {
        fits: false,
        pools,
        needed: none,
        available: none,
        shortfall: none,
        reason: `contextSize × slots = ${cells} is more than the ${MAX_CONTEXT_CELLS} cells one context may have`,
      };
    }
    const header = await readModelFileHeader(this.supervisor.loadOptions.modelPath);
    const needed = kvCacheBytes(header, next) ?? 0;
    const freed = kvCacheBytes(header, this.current) ?? 0;
    const available = os.freemem() + freed;
    const shortfall = Math.max(0, needed - available);
    const reason =
      shortfall > 0
        ? `the KV cache at the new sizes needs ${formatBytes(needed)} (${needed} bytes) of RAM and ${formatBytes(available)} (${available} bytes) is free with the current cache freed: ${shortfall} bytes short`
        : `the KV cache at the new sizes (${formatBytes(needed)}) fits in the ${formatBytes(available)} of RAM free with the current cache freed`;
    return {
      fits: shortfall === 0,
      pools,
      needed: { ram: needed, vram: 0 },
      available: { ram: available, vram: 0 },
      shortfall: { ram: shortfall, vram: 0 },
      reason,
    };
  }

  async activity(): Promise<Activity> {
    const client = this.client();
    const slots = await client.slots();
    const prefill = slots.filter((s) => s.state === 'prefill').length;
    const decode = slots.filter((s) => s.state === 'decode').length;
    return {
      pending_prefill: prefill,
      running_decode: decode,
      undrained_replies: Math.max(0, client.runningCount - prefill - decode),
      finished: 0,
      re_evaluation: null,
    };
  }

  async rebuild(change: RebuildChange, options: { skipPrecheck: boolean; onTeardown: () => void }): Promise<Rebuilt> {
    const startedAt = performance.now();
    await this.saveSlots();
    const saveMs = performance.now() - startedAt;
    options.onTeardown();
    return this.restartAt(changedSizes(this.current, change), saveMs);
  }

  async restore(_pools: readonly Pool[], sizes: Partial<PoolSizes>): Promise<Rebuilt> {
    try {
      return await this.restartAt({ ...this.current, ...sizes }, 0);
    } catch (error) {
      this.supervisor.announceDown();
      await this.discardFiles();
      throw error;
    }
  }

  /** Saves every slot (an empty one saves 0 tokens and is not kept); llama-server does not list what a restored slot holds. */
  private async saveSlots(): Promise<void> {
    const client = this.client();
    const folder = this.supervisor.slotFolder;
    if (!folder) throw new Error('the llama-server child has no slot folder');
    this.saved = [];
    for (const slot of await client.slots()) {
      const file = `rebuild-slot-${slot.slot}.bin`;
      const result = await client.slotAction(slot.slot, 'save', file, SLOT_STATE_TIMEOUT_MS);
      if (result.tokens > 0) this.saved.push({ slot: slot.slot, tokens: result.tokens, file });
      else await rm(join(folder, file), { force: true });
    }
  }

  /** Restarts the child at `sizes` and brings the saved prefixes back; the files are removed after an Applied one. */
  private async restartAt(sizes: PoolSizes, saveMs: number): Promise<Rebuilt> {
    const teardownAt = performance.now();
    const load: LoadOptionsInput = {
      ...this.supervisor.loadOptions,
      contextSize: sizes.contextSize,
      slots: sizes.slots,
      kvType: sizes.kvType,
      gpuLayers: sizes.gpuLayers,
    };
    const info = await this.supervisor.restartWith(load);
    const allocateMs = performance.now() - teardownAt;
    const restoreAt = performance.now();
    const prefixes = await this.bringBack(info.sizes);
    const restoreMs = performance.now() - restoreAt;
    await this.discardFiles();
    return { info, prefixes, timings: { saveMs, teardownMs: 0, allocateMs, restoreMs } };
  }

  private async bringBack(live: { contextSize: number; slots: number; kvType: PoolSizes['kvType'] }): Promise<PrefixReport> {
    const client = this.client();
    const folder = this.supervisor.slotFolder!;
    const sameLayout = live.slots === this.current.slots && live.kvType === this.current.kvType;
    const report: KeptPrefix[] = [];
    const ordered = sameLayout ? this.saved : [...this.saved].sort((a, b) => b.tokens - a.tokens);
    let nextSlot = 0;
    for (const saved of ordered) {
      const to = sameLayout ? saved.slot : nextSlot;
      if (saved.tokens >= live.contextSize || to >= live.slots) {
        report.push({ from: saved.slot, to: null, tokens: saved.tokens, restoredBy: 'dropped' });
        continue;
      }
      try {
        if (sameLayout) await client.slotAction(to, 'restore', saved.file, SLOT_STATE_TIMEOUT_MS);
        else await client.fillSlot(to, await readSlotFileTokens(join(folder, saved.file)), SLOT_STATE_TIMEOUT_MS);
        report.push({ from: saved.slot, to, tokens: saved.tokens, restoredBy: sameLayout ? 'state_file' : 're_evaluation' });
        nextSlot++;
      } catch (error) {
        if (this.supervisor.lost) throw error;
        report.push({ from: saved.slot, to: null, tokens: saved.tokens, restoredBy: 'dropped' });
      }
    }
    const kept = report.filter((p) => p.to !== null).length;
    return { kept, dropped: report.length - kept, slots: report };
  }

  private async discardFiles(): Promise<void> {
    const folder = this.supervisor.slotFolder;
    if (folder) await Promise.all(this.saved.map((s) => rm(join(folder, s.file), { force: true })));
    this.saved = [];
  }

  private client(): RemoteClient {
    const client = this.supervisor.client;
    if (!client) throw new Error(`the llama-server child is ${this.supervisor.state}, not ready`);
    return client;
  }
}
