/**
 * Coalescing by event-loop turn: a lone item goes alone, items of one turn go together, in order, one
 * pushed to go now goes at once; items that may wait go at most once a gap, and never delay one that may
 * not; and the front's TTFT share.
 */
import { describe, expect, it } from 'vitest';
import { mergeTokenChunks, TurnBatch, type TokenChunk } from '../../common/turn-batch.js';
import { frontMs } from '../../core/http/generation-response.js';
import type { ReplicaGenerateResult } from '../../core/replicas/request-dispatcher.js';

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

  it('hands on an item pushed to go now at once, with what its turn held before it, and the turn end then finds nothing', () => {
    const turns = manualTurns();
    const batches: number[][] = [];
    const batch = new TurnBatch<number>((items) => batches.push(items), turns.schedule);
    batch.push(1, 'now');
    expect(batches).toEqual([[1]]);
    batch.push(2);
    batch.push(3, 'now');
    expect(batches).toEqual([[1], [2, 3]]);
    batch.push(4);
    turns.endTurn();
    expect(batches).toEqual([[1], [2, 3], [4]]);
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

/** A clock and timers the test moves by hand. */
function manualClock() {
  let now = 0;
  const timers: { at: number; flush: () => void; cancelled: boolean }[] = [];
  return {
    spacing: (minGapMs: number) => ({
      minGapMs,
      now: () => now,
      after: (flush: () => void, ms: number) => {
        const timer = { at: now + ms, flush, cancelled: false };
        timers.push(timer);
        return () => {
          timer.cancelled = true;
        };
      },
    }),
    advance(ms: number) {
      now += ms;
      for (const timer of timers.splice(0)) {
        if (timer.cancelled) continue;
        if (timer.at <= now) timer.flush();
        else timers.push(timer);
      }
    },
    live: () => timers.filter((t) => !t.cancelled).length,
  };
}

describe('turn batch with a spacing', () => {
  const setup = () => {
    const turns = manualTurns();
    const clock = manualClock();
    const batches: string[][] = [];
    const batch = new TurnBatch<string>((items) => batches.push(items), turns.schedule, clock.spacing(16));
    return { turns, clock, batches, batch };
  };
  /** A batch with a 16 ms gap whose first item went alone (the last batch left at time 0). */
  const afterFirst = () => {
    const started = setup();
    started.batch.push('first');
    started.turns.endTurn();
    return started;
  };

  it('holds items that may wait until the gap after the last batch has passed, then sends them together', () => {
    const { turns, clock, batches, batch } = afterFirst();
    expect(batches).toEqual([['first']]);
    clock.advance(5);
    batch.push('a', 'gap');
    turns.endTurn();
    clock.advance(5);
    batch.push('b', 'gap');
    turns.endTurn();
    expect(batches).toEqual([['first']]);
    clock.advance(5);
    expect(batches).toEqual([['first']]);
    clock.advance(1);
    expect(batches).toEqual([['first'], ['a', 'b']]);
    expect(clock.live()).toBe(0);
  });

  it('sends an item that may wait at its turn end when the last batch went a gap or more ago (a slow stream adds nothing)', () => {
    const { turns, clock, batches, batch } = afterFirst();
    clock.advance(16);
    batch.push('a', 'gap');
    expect(clock.live()).toBe(0);
    turns.endTurn();
    clock.advance(40);
    batch.push('b', 'gap');
    turns.endTurn();
    expect(batches).toEqual([['first'], ['a'], ['b']]);
  });

  it('sends what was held, in order, with an item that may not wait, at that turn end, and drops the timer', () => {
    const { turns, clock, batches, batch } = afterFirst();
    clock.advance(2);
    batch.push('a', 'gap');
    turns.endTurn();
    expect(batches).toEqual([['first']]);
    batch.push('done');
    expect(batches).toEqual([['first']]);
    turns.endTurn();
    expect(batches).toEqual([['first'], ['a', 'done']]);
    expect(clock.live()).toBe(0);
    clock.advance(100);
    expect(batches).toEqual([['first'], ['a', 'done']]);
  });

  it('sends what was held for the gap, in order, with an item pushed to go now, and drops the timer', () => {
    const { clock, batches, batch } = afterFirst();
    clock.advance(2);
    batch.push('a', 'gap');
    batch.push('b', 'now');
    expect(batches).toEqual([['first'], ['a', 'b']]);
    expect(clock.live()).toBe(0);
  });

  it('lets an item that may wait, pushed in a turn already due to flush, go with it', () => {
    const { turns, clock, batches, batch } = afterFirst();
    clock.advance(1);
    batch.push('started');
    batch.push('a', 'gap');
    expect(clock.live()).toBe(0);
    turns.endTurn();
    expect(batches).toEqual([['first'], ['started', 'a']]);
  });

  it('sends the first item that may wait at its turn end when nothing was sent before', () => {
    const { turns, batches, batch } = setup();
    batch.push('a', 'gap');
    turns.endTurn();
    expect(batches).toEqual([['a']]);
  });

  it('without a spacing, never holds an item that may wait', () => {
    const turns = manualTurns();
    const batches: string[][] = [];
    const batch = new TurnBatch<string>((items) => batches.push(items), turns.schedule);
    batch.push('first');
    turns.endTurn();
    batch.push('a', 'gap');
    turns.endTurn();
    expect(batches).toEqual([['first'], ['a']]);
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
  const result = (queuedMs: number, prefillMs: number) =>
    ({ timings: { queuedMs, prefillMs, decodeMs: 0, prefillTokens: 0, decodeTokensPerSecond: 0 } }) as ReplicaGenerateResult;

  it('is the time to first token less the waits for a slot and the engine prefill', () => {
    expect(frontMs(result(30, 50), 1000, 1083)).toBeCloseTo(3);
  });

  it('is null when no token came', () => {
    expect(frontMs(result(30, 50), 1000, undefined)).toBeNull();
  });
});
