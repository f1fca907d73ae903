/**
 * The bench's SIMULATED engine and replay (bench/simulate/: the routing simulation's, never an engine of the
 * app or of these tests' subjects), as pure logic: its step model gives the TTFT and decode time it should,
 * a conversation's next turn finds its prefix, and the replay routes through Manifold's router.
 */
import { describe, expect, it } from 'vitest';
import type { PerformanceModel } from '../../bench/simulate/simulated-engine.js';
import { simulate } from '../../bench/simulate/simulation.js';
import { ceiling, type SimRequest } from '../../bench/simulate/workloads.js';

/** 10 ms a step, plus 1 ms a prefilled token: easy sums. */
const model: PerformanceModel = {
  name: 'test',
  slots: 2,
  chunkTokens: 10_000,
  prefillOrder: 'oldest',
  stepMs: (prefill) => 10 + prefill,
  restoreMsPerToken: { ram: 0, disk: 0 },
  kvBytesPerToken: 1,
  ramBytes: 2 ** 30,
  diskBytes: 2 ** 30,
};

const request = (id: number, arrivalMs: number, blocks: number[], outputTokens = 5): SimRequest => ({
  id,
  arrivalMs,
  promptTokens: blocks.length * 64,
  outputTokens,
  blocks,
  session: `s${blocks[0]}`,
});

describe('the simulated engine', () => {
  it('answers a lone request after one prefill step and decodes one token a step', () => {
    const result = simulate({ requests: [request(0, 0, [1, 2, 3, 4])], replicas: 1, model, policy: 'prefix', speedup: 1 });
    // 256 prompt tokens in one step: 10 + 256 ms to the first token.
    expect(result.ttftP50Ms).toBe(266);
    expect(result.hit).toBe(0);
  });

  it("finds a conversation's prefix on its next turn, and the ceiling counts the same reuse", () => {
    const turns = [request(0, 0, [1, 2, 3, 4]), request(1, 10_000, [1, 2, 3, 4, 5, 6, 7, 8])];
    const result = simulate({ requests: turns, replicas: 2, model, policy: 'prefix', speedup: 1 });
    // The second turn holds 4 of its 8 blocks: 256 of 512 tokens prefilled, over both turns 256 of 768 cached.
    expect(result.hit).toBeCloseTo(256 / 768);
    expect(ceiling(turns)).toBeCloseTo(4 / 12);
    expect(result.ttftP90Ms).toBe(266);
  });

  it('keeps round-robin blind to the prefix: the next turn goes to the other replica', () => {
    const turns = [request(0, 0, [1, 2, 3, 4]), request(1, 10_000, [1, 2, 3, 4, 5, 6, 7, 8])];
    expect(simulate({ requests: turns, replicas: 2, model, policy: 'round-robin', speedup: 1 }).hit).toBe(0);
  });

  it('tells where the hit the ceiling counts went missing, and what copying a shared start between slots would keep', () => {
    // Two conversations sharing a two-block system prompt, one replica: the second finds an empty slot, and
    // the engine keeps it out of the first's idle slot, so the system prompt is prefilled again.
    const two = [request(0, 0, [1, 2, 3, 4]), request(1, 10_000, [1, 2, 9, 10])];
    const asBuilt = simulate({ requests: two, replicas: 1, model, policy: 'prefix', speedup: 1 });
    expect(ceiling(two)).toBeCloseTo(2 / 8);
    expect(asBuilt.hit).toBe(0);
    expect(asBuilt.missed).toEqual({ chosen: 2 / 8, freeElsewhere: 0, busyOnly: 0, nowhere: 0 });
    const copying = simulate({ requests: two, replicas: 1, model, policy: 'prefix', speedup: 1, slotCopy: true });
    expect(copying.hit).toBeCloseTo(128 / 512);
    expect(copying.missed).toEqual({ chosen: 0, freeElsewhere: 0, busyOnly: 0, nowhere: 0 });
  });
});
