/**
 * The slot core pins a request to on a llama-server child that lends slot files (Replica.pinsSlots), by
 * llama-server's own rule (tools/server/server-context.cpp `get_available_slot`) with what core's index
 * knows: among the free slots, the one sharing most of the prompt when that is more than llama-server's
 * similarity threshold of it; else the least recently used (one never used first, then the lower number).
 * So the child's host-memory prompt cache saves and loads as it would for a slot of its own choosing, and
 * core's mirror of it (router/host-prompt-cache.ts) holds. Pure logic.
 */
import { LLAMA_SERVER_SLOT_PROMPT_SIMILARITY } from '../../common/prefix-cache.js';

export interface FreeSlot {
  readonly slot: number;
  /** Prompt tokens the slot holds (the index's whole blocks). */
  readonly sharedTokens: number;
  /** When it last finished a request; undefined when never. */
  readonly lastUsed: number | undefined;
}

/** The free slot to pin a prompt of `promptTokens` tokens to; null when none is free. */
export function slotToPin(free: readonly FreeSlot[], promptTokens: number): number | null {
  if (free.length === 0) return null;
  const similar = free.filter((s) => s.sharedTokens / Math.max(1, promptTokens) > LLAMA_SERVER_SLOT_PROMPT_SIMILARITY);
  if (similar.length) return similar.reduce((best, s) => (s.sharedTokens > best.sharedTokens ? s : best)).slot;
  return free.reduce((oldest, s) => ((s.lastUsed ?? -Infinity) < (oldest.lastUsed ?? -Infinity) ? s : oldest)).slot;
}
