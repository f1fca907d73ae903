/** A chat benchmark's variants run several times over, each repeat starting with another, and each variant's runs pooled into one row. */
import { describe, expect, it } from 'vitest';
import type { ChatTurnResult } from '../../bench/chat-workload.js';
import { byRepeat, pooled, repeatRatios, runRepeated, type ChatRun } from '../../bench/repeated-chat.js';

/** A finished turn of `user` with the given TTFT, 100 prompt tokens of which `cached` from cache. */
const turn = (user: number, turnIndex: number, ttftMs: number, cached: number, replica: number): ChatTurnResult => ({
  ttftMs,
  decodeTokensPerSecond: 10,
  promptTokens: 100,
  cachedTokens: cached,
  completionTokens: 8,
  replica,
  failedOver: [],
  error: null,
  user,
  turn: turnIndex,
  sequence: turnIndex,
  messages: [],
  answer: '',
  answerTokens: [],
});

describe('runRepeated', () => {
  it('runs every variant once a repeat, each repeat starting with the next variant, and keeps each variant’s runs in repeat order', async () => {
    const order: string[] = [];
    const runs = await runRepeated(['a', 'b', 'c'], 3, async (variant, repeat) => {
      order.push(`${variant}${repeat}`);
      return `${variant}:${repeat}`;
    });
    expect(order).toEqual(['a0', 'b0', 'c0', 'b1', 'c1', 'a1', 'c2', 'a2', 'b2']);
    expect(runs).toEqual([
      ['a:0', 'a:1', 'a:2'],
      ['b:0', 'b:1', 'b:2'],
      ['c:0', 'c:1', 'c:2'],
    ]);
  });
});

describe('pooled', () => {
  const first: ChatRun = { results: [turn(0, 0, 100, 0, 0), turn(0, 1, 300, 80, 0)], wallMs: 1000, oracle: { share: 0.5, mismatched: 1, promptTokens: 200 } };
  const second: ChatRun = { results: [turn(0, 0, 500, 0, 1), turn(0, 1, 700, 80, 0)], wallMs: 3000, oracle: { share: 0.8, mismatched: 0, promptTokens: 600 } };

  it('pools the requests, adds the walls, and weighs the oracle by each run’s prompt tokens', () => {
    const row = pooled([first, second], 16);
    expect(row.requests).toBe(4);
    expect(row.requestsPerSecond).toBeCloseTo(1); // 4 requests over 4 s
    expect(row.ttftsMs).toEqual([100, 300, 500, 700]);
    expect(row.cacheHitRate).toBeCloseTo(160 / 400);
    expect(row.oracle).toBeCloseTo((0.5 * 200 + 0.8 * 600) / 800);
    expect(row.oracleMismatches).toBe(1);
    expect(row.ttftP50ByRepeatMs).toEqual([100, 500]);
    expect(row.requestsPerSecondByRepeat).toEqual([2, 2 / 3]);
  });

  it('numbers each run’s conversations apart, so a conversation of one run is not read as staying with another’s', () => {
    // Alone, run 2's conversation 0 moves from replica 1 to 0; pooled with run 1's conversation 0 (which stayed
    // on replica 0), it must still read as one stay in two.
    expect(pooled([first, second], 16).stickiness).toBeCloseTo(1 / 2);
    expect(pooled([second], 16).stickiness).toBe(0);
  });

  it('gives no figures by repeat for one run', () => {
    expect(pooled([first], 16)).not.toHaveProperty('ttftP50ByRepeatMs');
  });
});

describe('byRepeat', () => {
  it('divides each repeat by the same repeat of the other row, and gives nothing when either ran once', () => {
    expect(byRepeat([900, 1200], [450, 400])).toEqual([2, 3]);
    expect(byRepeat(undefined, [450, 400])).toBeUndefined();
    expect(byRepeat([900, 1200], undefined)).toBeUndefined();
    expect(repeatRatios([2, 2.125])).toBe('2.00×, 2.13×');
  });
});
