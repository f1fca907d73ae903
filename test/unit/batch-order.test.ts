/** The engine's batch order (engine-bin/batch-order.ts): decoders' tokens first, then prompts in arrival order. */
import type { BatchItem, Token } from 'node-llama-cpp';
import { describe, expect, it } from 'vitest';
import { decodeFirstThenPromptsInOrder } from '../../engine-bin/batch-order.js';

const item = (tokens: number): BatchItem => ({ tokens: Array.from({ length: tokens }, () => 1 as Token), logits: [], evaluationPriority: 5 });

describe('decodeFirstThenPromptsInOrder', () => {
  it('gives every decoding sequence its token, then fills the rest with the oldest prompt first', () => {
    const first = item(700);
    const second = item(700);
    const decoders = [item(1), item(1)];
    const batch = decodeFirstThenPromptsInOrder({ items: [first, decoders[0]!, second, decoders[1]!], size: 512 });
    expect(batch).toEqual([
      { item: decoders[0], processAmount: 1 },
      { item: decoders[1], processAmount: 1 },
      { item: first, processAmount: 510 },
    ]);
  });

  it('moves on to the next prompt when the oldest fits, and stops when the batch is full', () => {
    const prompts = [item(100), item(300), item(400)];
    const batch = decodeFirstThenPromptsInOrder({ items: prompts, size: 512 });
    expect(batch.map((b) => [prompts.indexOf(b.item), b.processAmount])).toEqual([
      [0, 100],
      [1, 300],
      [2, 112],
    ]);
  });

  it('never puts more tokens in a batch than its size, even with more decoders than room', () => {
    const decoders = Array.from({ length: 6 }, () => item(1));
    const batch = decodeFirstThenPromptsInOrder({ items: [item(50), ...decoders], size: 4 });
    expect(batch.map((b) => b.item)).toEqual(decoders.slice(0, 4));
    expect(batch.reduce((s, b) => s + b.processAmount, 0)).toBe(4);
  });
});
