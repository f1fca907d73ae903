/**
 * Pure unit tests of the queue's logic (no engines): the bounded request queue (order, re-entry at the old
 * place, full, timeout, cancel, wait percentiles) and the dispatch plan (late binding with the real router
 * and prefix index, FIFO, the cache hold and its bound).
 */
import { describe, expect, it, vi } from 'vitest';
import { planDispatch, type DispatchRequest } from '../../core/router/dispatch-plan.js';
import { QueueFullError, QueueTimeoutError, RequestCancelledError } from '../../core/queue/queue-errors.js';
import { RequestQueue } from '../../core/queue/request-queue.js';
import { blockHashes } from '../../core/router/block-hash.js';
import { ExactPrefixIndex } from '../../core/router/prefix-index.js';
import { Router, type RouteCandidate } from '../../core/router/router.js';

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
    const timed = new RequestQueue<string, number>(
      settings,
      () => {},
      () => now,
    );
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
const replica = (index: number, running: number, slots = 2): Omit<RouteCandidate, 'servedConversation'> => ({
  replica: index,
  running,
  slots,
  prefillTokensPerMs: null,
  pendingPrefillTokens: 0,
});

interface Pending extends DispatchRequest {
  tokens: number[];
  /** Replicas that failed it (and have not come back anew). */
  avoid?: number[];
}

function plan(
  router: Router,
  index: ExactPrefixIndex,
  waiting: Pending[],
  replicas: Omit<RouteCandidate, 'servedConversation'>[],
  homes: Record<string, number> = {},
  cacheHoldMs = 500,
) {
  return planDispatch({
    waiting,
    replicas,
    choose: (r, candidates) => router.choose(blockHashes(r.tokens), r.tokens.length, candidates),
    reusableTokens: (r, replica) =>
      Math.max(index.matchedBlocks(replica, blockHashes(r.tokens)), index.matchedSaved(replica, blockHashes(r.tokens))?.blocks ?? 0) * 64,
    lastReplicaOf: (id) => homes[id],
    allowed: (r, replica) => !r.avoid?.includes(replica),
    cacheHoldMs,
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
    expect(plan(router, index, waiting, [replica(0, 2), replica(1, 0)]).bindings.map((b) => [b.seq, b.decision.replica])).toEqual([
      [0, 1],
      [1, 1],
    ]);
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

  it('holds a request for the full replica whose prefix cache saved its prefix, and restores it there', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const conversation = tokens(640, 1);
    // Replica 0's slot held the conversation, was saved to the RAM tier and now serves another one.
    index.setSlot(0, 0, blockHashes(conversation));
    index.saveSlot(0, 0, 7, 'ram', 10);
    index.setSlot(0, 0, blockHashes(tokens(640, 2)));
    const turn: Pending = { seq: 0, conversationId: undefined, waitedMs: 100, tokens: [...conversation, ...tokens(80, 9)] };
    const held = plan(router, index, [turn], [replica(0, 2), replica(1, 1)]);
    expect(held.bindings).toEqual([]);
    expect(held.nextHoldEndsInMs).toBe(400);
    const home = plan(router, index, [turn], [replica(0, 1), replica(1, 1)]);
    expect(home.bindings[0]).toMatchObject({ seq: 0, decision: { replica: 0, cachedTokens: 0, restore: { tokens: 640, tier: 'ram' }, prefillTokens: 80 } });
    // The hold is bounded as for a slot hit.
    expect(plan(router, index, [{ ...turn, waitedMs: 600 }], [replica(0, 2), replica(1, 1)]).bindings.map((b) => b.decision.replica)).toEqual([1]);
  });

  it('with measured rates, holds only as long as prefilling the held prefix on the free replica would take, at most cacheHoldMs', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const conversation = tokens(640, 1);
    index.setSlot(0, 0, blockHashes(conversation));
    index.setSlot(1, 0, blockHashes(conversation).slice(0, 5));
    const turn = (waitedMs: number): Pending => ({ seq: 0, conversationId: undefined, waitedMs, tokens: [...conversation, ...tokens(80, 9)] });
    const at = (rate: number) => [
      { ...replica(0, 2), prefillTokensPerMs: 1 },
      { ...replica(1, 1), prefillTokensPerMs: rate },
    ];
    // Replica 0 holds 320 tokens more than free replica 1, which prefills 1 token/ms: a hold of 320 ms.
    expect(plan(router, index, [turn(100)], at(1)).nextHoldEndsInMs).toBe(220);
    expect(plan(router, index, [turn(320)], at(1)).bindings.map((b) => b.decision.replica)).toEqual([1]);
    // At 0.1 token/ms the saving is 3.2 s: the hold is capped at cacheHoldMs.
    expect(plan(router, index, [turn(100)], at(0.1)).nextHoldEndsInMs).toBe(400);
    expect(plan(router, index, [turn(100)], at(0.1), {}, 5000).nextHoldEndsInMs).toBe(3100);
  });

  it('counts the prefill of the requests bound earlier in the same pass', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const measured = (i: number, running: number) => ({ ...replica(i, running, 4), prefillTokensPerMs: 1 });
    const waiting: Pending[] = [0, 1].map((seq) => ({ seq, conversationId: undefined, waitedMs: 0, tokens: tokens(1000, seq) }));
    // Both replicas run requests that only decode; the first new prompt goes to replica 0 (fewer running),
    // and the second finds 1000 tokens queued there (both then run 2), so it goes to replica 1.
    const bound = plan(router, index, waiting, [measured(0, 1), measured(1, 2)]);
    expect(bound.bindings.map((b) => [b.seq, b.decision.replica, b.decision.cost])).toEqual([
      [0, 0, 1000],
      [1, 1, 1000],
    ]);
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
