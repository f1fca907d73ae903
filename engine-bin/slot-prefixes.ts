/**
 * Keeping the prefix cache across a rebuild (DESIGN §5.4): before the teardown each slot that holds
 * tokens saves its KV state to a file; once the new context is live, the prefixes that fit come back —
 * from the state file when the slot count and KV type are unchanged (llama.cpp refuses a state from a
 * context with another number of sequences or cache type), else by evaluating their tokens again in the
 * background, after the outcome, so requests are not held by it. The most recently used prefixes win
 * when there are fewer slots than prefixes.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Token } from 'node-llama-cpp';
import type { ReEvaluation } from '../common/engine-protocol.js';
import type { KvType, KeptPrefix, PrefixReport } from '../common/rebuild.js';
import { loadSlotState, saveSlotState } from './sequence-state.js';
import type { Slot } from './slot.js';

export interface SavedPrefix {
  readonly slot: number;
  readonly tokens: readonly number[];
  readonly conversationId: string | null;
  readonly lastUsed: number | null;
  /** The state file; null when saving it failed (the prefix can still be evaluated again). */
  readonly file: string | null;
}

export interface SavedPrefixes {
  readonly dir: string;
  readonly slots: number;
  readonly kvType: KvType;
  readonly prefixes: readonly SavedPrefix[];
}

export async function savePrefixes(slots: readonly Slot[], kvType: KvType, dir: string, log: (line: string) => void): Promise<SavedPrefixes> {
  await mkdir(dir, { recursive: true });
  const prefixes: SavedPrefix[] = [];
  for (const slot of slots) {
    const tokens = [...(slot.sequence.contextTokens as readonly number[])];
    if (tokens.length === 0) continue;
    const file = join(dir, `slot-${slot.index}.state`);
    const saved = (await saveSlotState(slot, file, log, 'it will be evaluated again')) !== null;
    prefixes.push({ slot: slot.index, tokens, conversationId: slot.conversationId, lastUsed: slot.lastUsed, file: saved ? file : null });
  }
  return { dir, slots: slots.length, kvType, prefixes };
}

export interface PrefixRestore {
  readonly report: PrefixReport;
  /** Settles when every re-evaluation has finished (each slot is free again as soon as its own is done). */
  readonly reEvaluated: Promise<void>;
  /** How many prefixes are evaluated again and how many of them are done so far (counts up as each ends). */
  readonly progress: ReEvaluation;
}

/**
 * Brings `saved` back into `slots` (a new context of `contextSize` tokens per slot). State files load
 * before this resolves; re-evaluations run after it, each holding its slot through `hold`/`release`.
 */
export async function restorePrefixes(
  saved: SavedPrefixes,
  slots: readonly Slot[],
  kvType: KvType,
  hooks: { hold(slot: Slot): void; release(slot: Slot): void; log(line: string): void },
): Promise<PrefixRestore> {
  const sameLayout = saved.slots === slots.length && saved.kvType === kvType;
  const fitting = (p: SavedPrefix): boolean => p.tokens.length < slots[0]!.sequence.contextSize;
  // Without the same layout, prefixes go to slots 0..n-1 in order of recent use.
  const order = sameLayout ? [...saved.prefixes] : [...saved.prefixes].sort((a, b) => (b.lastUsed ?? 0) - (a.lastUsed ?? 0));
  const report: KeptPrefix[] = [];
  const toEvaluate: { slot: Slot; tokens: readonly number[] }[] = [];
  let next = 0;
  for (const prefix of order) {
    const slot = sameLayout ? slots[prefix.slot] : slots[next];
    if (!slot || !fitting(prefix)) {
      report.push({ from: prefix.slot, to: null, tokens: prefix.tokens.length, restoredBy: 'dropped' });
      continue;
    }
    next++;
    slot.conversationId = prefix.conversationId;
    slot.lastUsed = prefix.lastUsed;
    if (sameLayout && prefix.file && (await loadSlotState(slot, prefix.file, hooks.log, 'evaluating it again'))) {
      report.push({ from: prefix.slot, to: slot.index, tokens: slot.sequence.nextTokenIndex, restoredBy: 'state_file' });
      continue;
    }
    hooks.hold(slot);
    toEvaluate.push({ slot, tokens: prefix.tokens });
    report.push({ from: prefix.slot, to: slot.index, tokens: prefix.tokens.length, restoredBy: 're_evaluation' });
  }
  const progress = { done: 0, total: toEvaluate.length };
  const reEvaluated = (async () => {
    for (const { slot, tokens } of toEvaluate) {
      try {
        await slot.sequence.evaluateWithoutGeneratingNewTokens(tokens as Token[]);
      } catch (error) {
        hooks.log(`evaluating slot ${slot.index}'s prefix again failed (${(error as Error).message}); the slot starts empty`);
        await slot.sequence.clearHistory().catch(() => {});
      } finally {
        progress.done++;
        hooks.release(slot);
      }
    }
    await discardSaved(saved);
  })();
  const kept = report.filter((r) => r.restoredBy !== 'dropped').length;
  return { report: { kept, dropped: report.length - kept, slots: report }, reEvaluated, progress };
}

async function discardSaved(saved: SavedPrefixes): Promise<void> {
  await rm(saved.dir, { recursive: true, force: true });
}
