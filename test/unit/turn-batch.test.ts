/** Coalescing by event-loop turn: a lone item goes alone, items of one turn go together, in order; and the front's TTFT share. */
import { describe, expect, it } from 'vitest';
import { mergeTokenChunks, TurnBatch, type TokenChunk } from '../../common/turn-batch.js';
import { frontMs } from '../../electron/core/http/openai-routes.js';
import type { ReplicaGenerateResult } from '../../electron/core/replicas/request-dispatcher.js';

/** A scheduler the test runs by hand: each call is one turn's end. */
function manualTurns() {
  const pending: (() => void)[] = [];
  return { schedule: (flush: () => void) => pending.push(flush), endTurn: () => pending.splice(0).forEach((flush) => flush()), pending };
}

describe('turn batch', () => {
  it('hands on a lone item at the end of its turn, alone', () => {
    const turns = manualTurns();
    const batches: number[][] = [];
    const batch = new TurnBatch<number>((items) => batches.push(items), turns.schedule);
    batch.push(1);
    expect(batches).toEqual([]);
    turns.endTurn();
    batch.push(2);
    turns.endTurn();
    expect(batches).toEqual([[1], [2]]);
  });

  it('hands on the items of one turn as one batch, in order, scheduling one flush', () => {
    const turns = manualTurns();
    const batches: number[][] = [];
    const batch = new TurnBatch<number>((items) => batches.push(items), turns.schedule);
    for (const item of [1, 2, 3]) batch.push(item);
    expect(turns.pending).toHaveLength(1);
    turns.endTurn();
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('flushes on demand before the turn ends, and the turn end then finds nothing to send', () => {
    const turns = manualTurns();
    const batches: number[][] = [];
    const batch = new TurnBatch<number>((items) => batches.push(items), turns.schedule);
    batch.push(1);
    batch.push(2);
    batch.flush();
    batch.flush();
    turns.endTurn();
    expect(batches).toEqual([[1, 2]]);
    batch.push(3);
    turns.endTurn();
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('under setImmediate, items pushed in one turn go together and a later turn goes alone', async () => {
    const batches: number[][] = [];
    const batch = new TurnBatch<number>((items) => batches.push(items), setImmediate);
    batch.push(1);
    await Promise.resolve();
    batch.push(2);
    await new Promise((resolve) => setImmediate(resolve));
    batch.push(3);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(batches).toEqual([[1, 2], [3]]);
  });
});

describe('merging token chunks', () => {
  it('keeps a lone chunk as it is', () => {
    const chunk: TokenChunk = { tokens: [7], text: 'a' };
    expect(mergeTokenChunks([chunk])).toBe(chunk);
  });

  it('joins tokens and text in order, including chunks that carry only text or only tokens', () => {
    expect(
      mergeTokenChunks([
        { tokens: [1], text: 'he' },
        { tokens: [2], text: '' },
        { tokens: [3], text: 'llo' },
        { tokens: [], text: '!' },
      ]),
    ).toEqual({ tokens: [1, 2, 3], text: 'hello!' });
  });
});

describe("the front's share of TTFT", () => {
  const result = (queuedMs: number, prefillMs: number) => ({ timings: { queuedMs, prefillMs, decodeMs: 0, prefillTokens: 0, decodeTokensPerSecond: 0 } }) as ReplicaGenerateResult;

  it('is the time to first token less the waits for a slot and the engine prefill', () => {
    expect(frontMs(result(30, 50), 1000, 1083)).toBeCloseTo(3);
  });

  it('is null when no token came', () => {
    expect(frontMs(result(30, 50), 1000, undefined)).toBeNull();
  });
});
