/**
 * A slot: one sequence of the engine's context, with what the scheduler and the slots view know about it.
 * Slots are made together with their context and replaced with it when a rebuild changes the kv pool.
 */
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import type { ScheduledSlot } from './slot-scheduler.js';

export interface Slot extends ScheduledSlot {
  readonly sequence: LlamaContextSequence;
}

/** One slot per sequence of `context`, all idle and empty. */
export function makeSlots(context: LlamaContext, count: number): Slot[] {
  return Array.from({ length: count }, (_, index): Slot => {
    const sequence = context.getSequence();
    return {
      index,
      sequence,
      state: 'idle',
      conversationId: null,
      lastUsed: null,
      get tokens() {
        return sequence.contextTokens as readonly number[];
      },
      get heldTokens() {
        return sequence.nextTokenIndex;
      },
    };
  });
}
