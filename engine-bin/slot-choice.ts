/**
 * Slot choice (DESIGN §2, refined): among idle slots, the one that gains the most prefix for what it
 * loses — score = shared prefix − tokens the slot would drop (held − shared) — so a slot holding another
 * conversation's history is not overwritten for a short shared part (a common system prompt) while an
 * empty or less valuable slot is there. When no idle slot shares any prefix: the least recently used.
 * Pure, so it is tested without an engine.
 */

export interface SlotCandidate {
  readonly index: number;
  readonly idle: boolean;
  readonly tokens: readonly number[];
  /** Epoch ms of the last use; 0 for a slot never used. */
  readonly lastUsed: number;
}

export function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The slot to serve `prompt`, with the prefix it shares; null when no slot is idle. */
export function chooseSlot(slots: readonly SlotCandidate[], prompt: readonly number[]): { index: number; commonPrefix: number } | null {
  const idle = slots.filter((s) => s.idle).map((s) => {
    const commonPrefix = commonPrefixLength(s.tokens, prompt);
    return { slot: s, commonPrefix, score: commonPrefix - (s.tokens.length - commonPrefix) };
  });
  if (idle.length === 0) return null;
  const anyShared = idle.some((c) => c.commonPrefix > 0);
  const best = idle.reduce((a, b) => {
    if (anyShared && a.score !== b.score) return b.score > a.score ? b : a;
    return b.slot.lastUsed < a.slot.lastUsed ? b : a;
  });
  return { index: best.slot.index, commonPrefix: best.commonPrefix };
}
