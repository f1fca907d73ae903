/**
 * The layout the loader suggests for a model (replicas × context per slot × slots per replica), from the
 * fit estimate: on cards, as many replicas as card groups that each hold the weights and the KV cache of
 * the chosen context and slots; on the CPU, one replica (engines there share the cores), with as many
 * slots as RAM holds. Pure: the KV cache size comes in as a function of context and slots.
 */
import type { LayoutSuggestion } from '../../common/model-library.js';

/** Compute buffers and fragmentation on a card beyond the weights and the KV cache (the inspector's and the suggestion's). */
export const GPU_OVERHEAD = 1.05;
const DEFAULT_CONTEXT = 4096;
const MAX_SLOTS = 8;
const MIN_CONTEXT = 512;

export interface LayoutFacts {
  weightsBytes: number;
  /** The model's trained context; null when the header does not say. */
  contextLength: number | null;
  /** KV cache bytes of one replica with `slots` slots of `contextSize` tokens. */
  kvBytes: (contextSize: number, slots: number) => number;
  /** Free bytes of each card, in card order; null or empty for CPU engines. */
  cardsFreeBytes: readonly number[] | null;
  /** RAM free for CPU engines. */
  freeRamBytes: number;
  /** What one CPU engine takes beyond weights and KV. */
  engineRuntimeBytes: number;
}

/** The most slots (up to 8) whose KV fits in `room` at `contextSize`; 0 when not even one does. */
function slotsFitting(room: number, contextSize: number, kvBytes: LayoutFacts['kvBytes']): number {
  let slots = 0;
  while (slots < MAX_SLOTS && kvBytes(contextSize, slots + 1) <= room) slots++;
  return slots;
}

/** The context and slots filling `room`: the default context (or the model's, when shorter), halved until a slot fits. */
function fill(room: number, facts: LayoutFacts): { contextSize: number; slots: number } | null {
  let contextSize = Math.min(DEFAULT_CONTEXT, facts.contextLength ?? DEFAULT_CONTEXT);
  while (contextSize >= MIN_CONTEXT) {
    const slots = slotsFitting(room, contextSize, facts.kvBytes);
    if (slots > 0) return { contextSize, slots };
    contextSize = Math.floor(contextSize / 2);
  }
  return null;
}

/** `cards` split in order into `replicas` groups of equal size, a replica's cards each (the caller checks that they divide). */
export function cardGroups<T>(cards: readonly T[], replicas: number): T[][] {
  const size = cards.length / replicas;
  return Array.from({ length: replicas }, (_, g) => cards.slice(g * size, (g + 1) * size));
}

export function suggestLayout(facts: LayoutFacts): LayoutSuggestion {
  const cards = facts.cardsFreeBytes ?? [];
  for (let replicas = cards.length; replicas >= 1; replicas--) {
    if (cards.length % replicas !== 0) continue;
    const size = cards.length / replicas;
    const groupFree = Math.min(...cardGroups(cards, replicas).map((group) => group.reduce((a, b) => a + b, 0)));
    const layout = fill(groupFree / GPU_OVERHEAD - facts.weightsBytes, facts);
    if (layout) {
      const reason = `${replicas} replica${replicas === 1 ? '' : 's'} of ${size} card${size === 1 ? '' : 's'}: each group holds the weights and ${layout.slots} × ${layout.contextSize} tokens of KV cache`;
      return { replicas, ...layout, device: 'gpu', reason };
    }
  }
  const layout = fill(facts.freeRamBytes - facts.weightsBytes - facts.engineRuntimeBytes, facts);
  const why = cards.length > 0 ? 'no card group holds the model: CPU engines, ' : 'no GPU: ';
  if (layout) return { replicas: 1, ...layout, device: 'cpu', reason: `${why}one replica with ${layout.slots} × ${layout.contextSize} tokens in free RAM` };
  return {
    replicas: 1,
    contextSize: MIN_CONTEXT,
    slots: 1,
    device: 'cpu',
    reason: `${why}the model does not fit in free RAM even with one ${MIN_CONTEXT}-token slot`,
  };
}
