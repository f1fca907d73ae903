/** Pure unit tests of router logic: block hashes, both index forms, costs, ties and policies (no engines). */
import { describe, expect, it } from 'vitest';
import { BLOCK_TOKENS, blockHashes } from '../../core/router/block-hash.js';
import { EstimatedPrefixIndex, ExactPrefixIndex } from '../../core/router/prefix-index.js';
import { BASELINE_RUNNING_PENALTY } from '../../core/router/route-costs.js';
import { Router, type RouteCandidate } from '../../core/router/router.js';

const tokens = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => (i * 31 + seed) % 1000);
const candidate = (replica: number, running = 0, extra: Partial<RouteCandidate> = {}): RouteCandidate => ({
  replica,
  running,
  slots: 2,
  prefillTokensPerMs: null,
  pendingPrefillTokens: 0,
  ...extra,
});

describe('block hashes', () => {
  it('hashes whole 64-token blocks, chained so that a block hash covers the whole prefix', () => {
    expect(blockHashes(tokens(63))).toEqual([]);
    const a = blockHashes(tokens(200));
    expect(a).toHaveLength(3);
    const changedFirst = tokens(200);
    changedFirst[0] = 999_999;
    const b = blockHashes(changedFirst);
    // Changing token 0 changes every later block's hash, not only block 0's.
    expect(b.every((h, i) => h !== a[i])).toBe(true);
    const sameStart = [...tokens(128), ...tokens(72, 5)];
    expect(blockHashes(sameStart).slice(0, 2)).toEqual(a.slice(0, 2));
    expect(blockHashes(sameStart)[2]).not.toBe(a[2]);
    expect(a.every((h) => Number.isSafeInteger(h))).toBe(true);
  });
});

describe('exact prefix index', () => {
  it('matches the longest slot of a replica and drops what a slot lost when it was reused', () => {
    const index = new ExactPrefixIndex();
    const conversation = blockHashes(tokens(64 * 5));
    index.setSlot(0, 0, conversation);
    index.setSlot(0, 1, conversation.slice(0, 2));
    expect(index.matchedBlocks(0, conversation)).toBe(5);
    expect(index.matchedBlocks(1, conversation)).toBe(0);
    index.truncateSlot(0, 0, 1);
    expect(index.matchedBlocks(0, conversation)).toBe(2);
    expect(index.size).toBe(3);
    index.forgetReplica(0);
    expect(index.matchedBlocks(0, conversation)).toBe(0);
    expect(index.size).toBe(0);
  });
});

describe('estimated prefix index', () => {
  it('notes served blocks per replica, evicts the least recently noted past its cap, and forgets a replica', () => {
    const index = new EstimatedPrefixIndex(4);
    const a = blockHashes(tokens(64 * 3, 1));
    const b = blockHashes(tokens(64 * 3, 2));
    index.noteServed(0, a);
    expect(index.matchedBlocks(0, a)).toBe(3);
    expect(index.matchedBlocks(1, a)).toBe(0);
    index.noteServed(1, b);
    expect(index.size).toBe(4);
    // a[0] and a[1] were the least recently noted.
    expect(index.matchedBlocks(0, a)).toBe(0);
    expect(index.matchedBlocks(1, b)).toBe(3);
    index.forgetReplica(1);
    expect(index.matchedBlocks(1, b)).toBe(0);
  });
});

describe('router', () => {
  it('sends a prompt to the replica holding its prefix, until that one is busier than re-reading the prompt', () => {
    const index = new ExactPrefixIndex();
    const prompt = tokens(64 * 10);
    index.setSlot(1, 0, blockHashes(prompt));
    const router = new Router(index);
    const blocks = blockHashes(prompt);
    expect(router.route(blocks, prompt.length, [candidate(0), candidate(1)])).toMatchObject({
      replica: 1,
      cachedTokens: 640,
      prefillTokens: 0,
      costKind: 'baseline',
    });
    // Baseline: 640 uncached tokens are cheaper than one more running request (3000).
    expect(router.route(blocks, prompt.length, [candidate(0), candidate(1, 1)])).toMatchObject({ replica: 0, prefillTokens: 640, cost: 640 });
    expect(BASELINE_RUNNING_PENALTY).toBe(3000);
    // Measured: requests that only decode there do not count against it (the engine batches them with a
    // new prefill); 1000 prompt tokens still to prefill there come first, and 640 elsewhere are cheaper (past the 25% tie).
    const measured = { prefillTokensPerMs: 1 };
    expect(router.route(blocks, prompt.length, [candidate(0, 0, measured), candidate(1, 1, measured)])?.replica).toBe(1);
    expect(router.route(blocks, prompt.length, [candidate(0, 0, measured), candidate(1, 1, { ...measured, pendingPrefillTokens: 1000 })])?.replica).toBe(0);
  });

  it('breaks ties by fewer running, then fewer routed, spreading new conversations', () => {
    const router = new Router(new ExactPrefixIndex());
    const picks = [0, 1, 2, 3].map(() => router.route([], 100, [candidate(0), candidate(1)])!.replica);
    expect(picks).toEqual([0, 1, 0, 1]);
    expect(router.routedCount(0)).toBe(2);
  });

  it('gives a tie to the replica that last served the conversation, but not a clear loss', () => {
    const router = new Router(new ExactPrefixIndex());
    router.route([], 100, [candidate(0), candidate(1)]);
    // Replica 1 has routed fewer, but replica 0 served this conversation's short first turn.
    expect(router.route([], 100, [candidate(0, 0, { servedConversation: true }), candidate(1)])!.replica).toBe(0);
    // A busier conversation replica costs 3000 more in the baseline: not a tie.
    expect(router.route([], 100, [candidate(0, 1, { servedConversation: true }), candidate(1)])!.replica).toBe(1);
  });

  it('measures ties against the lowest cost, so that with 3 or 4 replicas every order of candidates picks the same one', () => {
    const permutations = <T>(items: T[]): T[][] =>
      items.length <= 1 ? [items] : items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
    // 1200 uncached tokens at these rates cost 140, 120 and 100 ms: 120 is within 25% of the lowest, 140 is not.
    const three = [
      candidate(0, 0, { prefillTokensPerMs: 1200 / 140 }),
      candidate(1, 0, { prefillTokensPerMs: 10 }),
      candidate(2, 0, { prefillTokensPerMs: 12 }),
    ];
    const picks = permutations(three).map((order) => new Router(new ExactPrefixIndex()).choose([], 1200, order)!.replica);
    expect(picks).toHaveLength(6);
    // Pair by pair, [100, 120, 140] picked replica 0 (140 ties 120, which tied 100, and wins on index).
    expect(new Set(picks)).toEqual(new Set([1]));
    // A fourth replica as cheap as the lowest ((1200 pending + 1200) / 24 = 100) but busier loses the tie to the idle ones; the least routed wins next.
    const four = [...three, candidate(3, 1, { prefillTokensPerMs: 24, pendingPrefillTokens: 1200 })];
    const router = new Router(new ExactPrefixIndex());
    router.noteRouted(1);
    const fourPicks = permutations(four).map((order) => router.choose([], 1200, order)!.replica);
    expect(fourPicks).toHaveLength(24);
    expect(new Set(fourPicks)).toEqual(new Set([2]));
  });

  it('uses the expected time to first token once every candidate has measured rates', () => {
    const index = new ExactPrefixIndex();
    const prompt = tokens(64 * 20);
    index.setSlot(0, 0, blockHashes(prompt).slice(0, 10));
    const router = new Router(index);
    // Replica 1 prefills 10× faster: reading all 1280 tokens there beats reading 640 on replica 0.
    const slow = candidate(0, 0, { prefillTokensPerMs: 1 });
    const fast = candidate(1, 0, { prefillTokensPerMs: 10 });
    const decision = router.route(blockHashes(prompt), prompt.length, [slow, fast]);
    expect(decision).toMatchObject({ replica: 1, costKind: 'measured', cost: 128 });
    // A busy fast replica first prefills what its running requests still have to: (6000 + 1280) / 10 = 728 > 640.
    const busyFast = candidate(1, 1, { prefillTokensPerMs: 10, pendingPrefillTokens: 6000 });
    expect(router.route(blockHashes(prompt), prompt.length, [slow, busyFast])?.replica).toBe(0);
  });

  it('keeps a conversation on its busy replica rather than prefilling it again on an idle one (measured in the multiturn benchmark)', () => {
    // The rates, loads and index of one turn the multiturn run moved: a 665-token prompt whose replica 2
    // holds 512 tokens and runs 2 requests (decoding), against an idle replica 3 holding the system prompt.
    const index = new ExactPrefixIndex();
    const prompt = tokens(665);
    index.setSlot(2, 0, blockHashes(prompt).slice(0, 8));
    index.setSlot(3, 0, blockHashes(prompt).slice(0, 1));
    const home = candidate(2, 2, { slots: 4, prefillTokensPerMs: 0.087 });
    const idle = candidate(3, 0, { slots: 4, prefillTokensPerMs: 0.082 });
    const decision = new Router(index).choose(blockHashes(prompt), prompt.length, [idle, home])!;
    // 153 tokens to prefill at home against 601 on the idle replica (the old queue-wait term, 2/4 of a
    // 9.1 s service time, sent it to the idle one).
    expect(decision).toMatchObject({ replica: 2, cachedTokens: 512, prefillTokens: 153 });
  });

  it('gives a tie to the replica holding more of the prompt before the less busy one, in every order', () => {
    const index = new ExactPrefixIndex();
    const prompt = tokens(640);
    index.setSlot(0, 0, blockHashes(prompt).slice(0, 5));
    // Replica 0: 380 pending + 320 uncached = 700 ms; replicas 1 and 2: 640 ms, idle, holding nothing. Within 25%.
    const costs = [
      candidate(0, 1, { prefillTokensPerMs: 1, pendingPrefillTokens: 380 }),
      candidate(1, 0, { prefillTokensPerMs: 1 }),
      candidate(2, 0, { prefillTokensPerMs: 1 }),
    ];
    for (const order of [
      [0, 1, 2],
      [2, 1, 0],
      [1, 0, 2],
    ]) {
      expect(
        new Router(index).choose(
          blockHashes(prompt),
          prompt.length,
          order.map((i) => costs[i]!),
        ),
      ).toMatchObject({ replica: 0, cost: 700, prefillTokens: 320 });
    }
    // Past the tolerance, the idle replica wins.
    const busier = candidate(0, 1, { prefillTokensPerMs: 1, pendingPrefillTokens: 600 });
    expect(new Router(index).choose(blockHashes(prompt), prompt.length, [busier, costs[1]!])!.replica).toBe(1);
  });

  it('keeps round-robin and least-loaded as policies, and skips replicas not offered', () => {
    const rr = new Router(new ExactPrefixIndex(), 'round-robin');
    const seq = [0, 1, 2, 3].map(() => rr.route([], 1, [candidate(0), candidate(1), candidate(2)])!.replica);
    expect(seq).toEqual([0, 1, 2, 0]);
    expect(rr.route([], 1, [candidate(0), candidate(2)])!.replica).toBe(2);
    const ll = new Router(new ExactPrefixIndex(), 'least-loaded');
    expect(ll.route([], 1, [candidate(0, 3), candidate(1, 1), candidate(2, 2)])!.replica).toBe(1);
    expect(new Router(new ExactPrefixIndex()).route([], 1, [])).toBeNull();
  });

  it('never reports more cached tokens than the prompt has', () => {
    const index = new ExactPrefixIndex();
    const prompt = tokens(64 * 2);
    index.setSlot(0, 0, blockHashes(prompt));
    const decision = new Router(index).route(blockHashes(prompt), 100, [candidate(0)]);
    expect(decision!.cachedTokens).toBe(100);
    expect(BLOCK_TOKENS).toBe(64);
  });
});
