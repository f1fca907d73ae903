/**
 * Slot choice (DESIGN §2): the idle slot whose held tokens share the longest prefix with the prompt;
 * when none shares any, the least recently used idle slot. Pure, so it is tested without an engine.
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
  let best: { index: number; commonPrefix: number; lastUsed: number } | null = null;
  for (const slot of slots) {
    if (!slot.idle) continue;
    const commonPrefix = commonPrefixLength(slot.tokens, prompt);
    const better =
      best === null ||
      commonPrefix > best.commonPrefix ||
      (commonPrefix === best.commonPrefix && slot.lastUsed < best.lastUsed);
    if (better) best = { index: slot.index, commonPrefix, lastUsed: slot.lastUsed };
  }
  return best && { index: best.index, commonPrefix: best.commonPrefix };
}
