/**
 * Slot choice (DESIGN §2, refined so that one conversation does not evict another):
 * - while an empty slot is idle, a slot that holds tokens is taken only for a continuation of what it
 *   holds (the prompt keeps at least 3/4 of the slot's tokens, or the slot last served the same
 *   conversation id and shares a prefix with it: a re-tokenized answer may differ from the tokens that
 *   were sampled), never for a different conversation that merely shares its start (a system prompt);
 * - the slot that last served the request's conversation, if it still shares a prefix with it;
 * - else, among the slots left, the one that gains the most for what it loses: score = shared prefix − tokens
 *   the slot would drop; when none shares any prefix, the least recently used.
 * Pure, so it is tested without an engine.
 */

export interface SlotCandidate {
  readonly index: number;
  readonly idle: boolean;
  readonly tokens: readonly number[];
  /** Epoch ms of the last use; 0 for a slot never used. */
  readonly lastUsed: number;
  /** The conversation the slot last served, when the request named one. */
  readonly conversationId?: string | null;
}

/** Share of a slot's tokens a prompt may drop and still count as continuing that slot's conversation. */
export const CONTINUATION_SLACK = 0.25;

export function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** The slot to serve `prompt`, with the prefix it shares; null when no slot is idle. */
export function chooseSlot(
  slots: readonly SlotCandidate[],
  prompt: readonly number[],
  conversationId: string | null = null,
): { index: number; commonPrefix: number } | null {
  const idle = slots
    .filter((s) => s.idle)
    .map((s) => {
      const commonPrefix = commonPrefixLength(s.tokens, prompt);
      const dropped = s.tokens.length - commonPrefix;
      return { slot: s, commonPrefix, dropped, score: commonPrefix - dropped };
    });
  const anyEmpty = idle.some((c) => c.slot.tokens.length === 0);
  const own = (c: (typeof idle)[number]): boolean => conversationId !== null && c.slot.conversationId === conversationId && c.commonPrefix > 0;
  const continues = (c: (typeof idle)[number]): boolean => own(c) || c.dropped <= CONTINUATION_SLACK * c.slot.tokens.length;
  // The conversation's own slot, when it still holds its start, is where its next turn goes.
  const owned = idle.filter(own);
  const candidates = owned.length ? owned : anyEmpty ? idle.filter(continues) : idle;
  if (candidates.length === 0) return null;
  const anyShared = candidates.some((c) => c.commonPrefix > 0);
  const best = candidates.reduce((a, b) => {
    if (anyShared && a.score !== b.score) return b.score > a.score ? b : a;
    return b.slot.lastUsed < a.slot.lastUsed ? b : a;
  });
  return { index: best.slot.index, commonPrefix: best.commonPrefix };
}
