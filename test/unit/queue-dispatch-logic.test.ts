/**
 * Pure unit tests of the queue's logic (no engines): the bounded request queue (order, re-entry at the old
 * place, full, timeout, cancel, wait percentiles) and the dispatch plan (late binding with the real router
 * and prefix index, FIFO, the cache hold and its bound).
 */
import { describe, expect, it, vi } from 'vitest';
import { planDispatch, type DispatchRequest } from '../../electron/core/queue/dispatch-plan.js';
import { QueueFullError, QueueTimeoutError, RequestCancelledError } from '../../electron/core/queue/queue-errors.js';
import { RequestQueue } from '../../electron/core/queue/request-queue.js';
import { blockHashes } from '../../electron/core/router/block-hash.js';
import { ExactPrefixIndex } from '../../electron/core/router/prefix-index.js';
import { Router, type RouteCandidate } from '../../electron/core/router/router.js';

const settings = { maxWaiting: 3, timeoutMs: 1000, cacheHoldMs: 500 };

describe('request queue', () => {
  it('keeps arrival order, puts a re-entering request back at its old place, and binds by entry', async () => {
    const queue = new RequestQueue<string, number>(settings, () => {});
    const seqs = [queue.takeSeq(), queue.takeSeq(), queue.takeSeq()];
    const first = queue.wait(seqs[0]!, 'a');
    void queue.wait(seqs[2]!, 'c');
    // 'b' failed over: it re-enters with its own (older) number and lands before 'c'.
    void queue.wait(seqs[1]!, 'b', { reentering: true });
    expect(queue.waiting().map((w) => w.payload)).toEqual(['a', 'b', 'c']);
    queue.bind(queue.waiting()[0]!, 7);
    await expect(first).resolves.toBe(7);
    expect(queue.size).toBe(2);
  });

  it('refuses one more than maxWaiting, but never a failover', async () => {
    const queue = new RequestQueue<string, number>(settings, () => {});
    for (const p of ['a', 'b', 'c']) void queue.wait(queue.takeSeq(), p);
    await expect(queue.wait(queue.takeSeq(), 'd')).rejects.toBeInstanceOf(QueueFullError);
    expect(queue.stats.rejected.full).toBe(1);
    void queue.wait(0, 'failover', { reentering: true });
    expect(queue.size).toBe(4);
  });

  it('times a request out after timeoutMs and drops a cancelled one', async () => {
    vi.useFakeTimers();
    try {
      const queue = new RequestQueue<string, number>(settings, () => {});
      const late = queue.wait(queue.takeSeq(), 'late');
      const abort = new AbortController();
      const cancelled = queue.wait(queue.takeSeq(), 'cancelled', { signal: abort.signal });
      abort.abort();
      await expect(cancelled).rejects.toBeInstanceOf(RequestCancelledError);
      expect(queue.size).toBe(1);
      vi.advanceTimersByTime(1001);
      await expect(late).rejects.toBeInstanceOf(QueueTimeoutError);
      expect(queue.size).toBe(0);
      expect(queue.stats.rejected.timeout).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps percentiles of the waits', () => {
    const queue = new RequestQueue<string, number>(settings, () => {});
    let now = 0;
    const timed = new RequestQueue<string, number>(settings, () => {}, () => now);
    for (const wait of [10, 20, 30, 4000]) {
      void timed.wait(timed.takeSeq(), 'x').catch(() => {});
      now += wait;
      timed.bind(timed.waiting()[0]!, 0);
    }
    expect(timed.stats.summary()).toEqual({ p50Ms: 30, p90Ms: 4000, p99Ms: 4000, maxMs: 4000 });
    expect(queue.stats.summary().p50Ms).toBe(0);
  });
});

const tokens = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => (i * 31 + seed) % 1000);
const replica = (index: number, running: number, slots = 2): Omit<RouteCandidate, 'servedConversation'> => ({ replica: index, running, slots, prefillTokensPerMs: null, serviceMs: null });

interface Pending extends DispatchRequest {
  tokens: number[];
  /** Replicas that failed it (and have not come back anew). */
  avoid?: number[];
}

function plan(router: Router, index: ExactPrefixIndex, waiting: Pending[], replicas: Omit<RouteCandidate, 'servedConversation'>[], homes: Record<string, number> = {}) {
  return planDispatch({
    waiting,
    replicas,
    choose: (r, candidates) => router.choose(blockHashes(r.tokens), r.tokens.length, candidates),
    cachedTokens: (r, replica) => index.matchedBlocks(replica, blockHashes(r.tokens)) * 64,
    lastReplicaOf: (id) => homes[id],
    allowed: (r, replica) => !r.avoid?.includes(replica),
    cacheHoldMs: 500,
  });
}

describe('dispatch plan', () => {
  it('binds oldest first, only to free slots, and nothing when every slot is taken', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const waiting = [0, 1, 2, 3].map((seq) => ({ seq, conversationId: undefined, waitedMs: 0, tokens: tokens(100, seq) }));
    const bound = plan(router, index, waiting, [replica(0, 1), replica(1, 2)]);
    // One free slot (replica 0): the oldest request takes it.
    expect(bound.bindings.map((b) => [b.seq, b.decision.replica])).toEqual([[0, 0]]);
    expect(plan(router, index, waiting, [replica(0, 2), replica(1, 2)]).bindings).toEqual([]);
    // A healed replica with two free slots takes the two oldest at once.
    expect(plan(router, index, waiting, [replica(0, 2), replica(1, 0)]).bindings.map((b) => [b.seq, b.decision.replica])).toEqual([[0, 1], [1, 1]]);
  });

  it('holds a request for the full replica that holds its prefix, lets younger ones pass, then gives up the hold', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const conversation = tokens(640, 1);
    index.setSlot(0, 0, blockHashes(conversation));
    const held: Pending = { seq: 0, conversationId: undefined, waitedMs: 100, tokens: [...conversation, ...tokens(20, 9)] };
    const young: Pending = { seq: 1, conversationId: undefined, waitedMs: 0, tokens: tokens(100, 4) };
    const first = plan(router, index, [held, young], [replica(0, 2), replica(1, 1)]);
    expect(first.bindings.map((b) => [b.seq, b.decision.replica])).toEqual([[1, 1]]);
    expect(first.nextHoldEndsInMs).toBe(400);
    // Its home frees a slot: it goes home, reusing its prefix.
    const home = plan(router, index, [held], [replica(0, 1), replica(1, 1)]);
    expect(home.bindings[0]).toMatchObject({ seq: 0, decision: { replica: 0, cachedTokens: 640 } });
    // Past the hold, it takes the free slot elsewhere.
    const late = plan(router, index, [{ ...held, waitedMs: 600 }], [replica(0, 2), replica(1, 1)]);
    expect(late.bindings.map((b) => [b.seq, b.decision.replica])).toEqual([[0, 1]]);
    expect(late.nextHoldEndsInMs).toBeNull();
  });

  it('holds a turn for the full replica that served its conversation even when no block is indexed yet', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const turn: Pending = { seq: 0, conversationId: 'c', waitedMs: 0, tokens: tokens(30) };
    const held = plan(router, index, [turn], [replica(0, 2), replica(1, 0)], { c: 0 });
    expect(held.bindings).toEqual([]);
    expect(held.nextHoldEndsInMs).toBe(500);
    // With a free slot at home, the router's conversation tie-break sends it there.
    const home = plan(router, index, [turn], [replica(0, 1), replica(1, 1)], { c: 0 });
    expect(home.bindings.map((b) => b.decision.replica)).toEqual([0]);
  });

  it('does not send a request back to a replica that failed it, even when that replica has the only free slot', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const failed: Pending = { seq: 0, conversationId: undefined, waitedMs: 0, tokens: tokens(100), avoid: [1] };
    const fresh: Pending = { seq: 1, conversationId: undefined, waitedMs: 0, tokens: tokens(100, 3) };
    expect(plan(router, index, [failed, fresh], [replica(0, 2), replica(1, 0)]).bindings.map((b) => [b.seq, b.decision.replica])).toEqual([[1, 1]]);
  });

  it('never holds under the round-robin or least-loaded policies', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index, 'least-loaded');
    const conversation = tokens(640, 1);
    index.setSlot(0, 0, blockHashes(conversation));
    const request: Pending = { seq: 0, conversationId: undefined, waitedMs: 0, tokens: conversation };
    expect(plan(router, index, [request], [replica(0, 2), replica(1, 1)]).bindings.map((b) => b.decision.replica)).toEqual([1]);
  });
});
