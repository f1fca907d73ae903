/**
 * A slot: one sequence of the engine's context, with what the slots view shows about it. Slots are made
 * together with their context and replaced with it when a rebuild changes the kv pool.
 */
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import type { SlotState } from '../common/engine-protocol.js';

export interface Slot {
  readonly index: number;
  readonly sequence: LlamaContextSequence;
  state: SlotState;
  conversationId: string | null;
  lastUsed: number | null;
}

/** One slot per sequence of `context`, all idle and empty. */
export function makeSlots(context: LlamaContext, count: number): Slot[] {
  return Array.from({ length: count }, (_, index): Slot => ({
    index,
    sequence: context.getSequence(),
    state: 'idle',
    conversationId: null,
    lastUsed: null,
  }));
}
