/**
 * Pure unit tests of borrowing (no engines): the router counts, for a free replica, a prefix another
 * compatible replica saved in its prefix cache at a restore's cost; the dispatch plan then binds the turn
 * there instead of holding it for the busy replica that saved it; round-robin never borrows; a replica
 * without lenders (remote, or a llama-server child lending no slot files) still waits; a llama-server
 * child borrows another's slot files, never its prompt cache; core's mirror keeps the owner's entry after
 * a borrow, and follows a llama-server child's slot files and a slot restored from one.
 */
import { describe, expect, it } from 'vitest';
import { engineRequestSchema } from '../../common/engine-protocol.js';
import type { StartedInfo } from '../../core/engine/engine-client.js';
import { planDispatch, type DispatchRequest } from '../../core/router/dispatch-plan.js';
import { RoutingState } from '../../core/replicas/routing-state.js';
import { BLOCK_TOKENS, blockHashes } from '../../core/router/block-hash.js';
import { ExactPrefixIndex, reusableBlocks } from '../../core/router/prefix-index.js';
import { ASSUMED_RESTORE_SHARE } from '../../core/router/route-costs.js';
import { Router, type RouteCandidate } from '../../core/router/router.js';

const tokens = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => (i * 31 + seed) % 1000);
const conversation = tokens(640, 1);
const turnTokens = [...conversation, ...tokens(80, 9)];

interface Pending extends DispatchRequest {
  tokens: number[];
}
const turn = (waitedMs = 0): Pending => ({ seq: 0, conversationId: 'c', waitedMs, tokens: turnTokens });

/** Replica `index` with `running` of 2 slots busy; by default every other of `all` is a lender. */
const replica = (index: number, running: number, all: readonly number[], extra: Partial<RouteCandidate> = {}): Omit<RouteCandidate, 'servedConversation'> => ({
  replica: index,
  running,
  slots: 2,
  prefillTokensPerMs: null,
  pendingPrefillTokens: 0,
  borrowFrom: all.filter((i) => i !== index),
  ...extra,
});

/** An index where replica 0's slot held the conversation, saved it as entry 7 in RAM, and now serves another. */
function savedOnZero(): ExactPrefixIndex {
  const index = new ExactPrefixIndex();
  index.setSlot(0, 0, blockHashes(conversation));
  index.saveSlot(0, 0, 7, 'ram', conversation.length / BLOCK_TOKENS);
  index.setSlot(0, 0, blockHashes(tokens(640, 2)));
  return index;
}

function plan(
  router: Router,
  index: ExactPrefixIndex,
  waiting: Pending[],
  replicas: Omit<RouteCandidate, 'servedConversation'>[],
  homes: Record<string, number> = { c: 0 },
) {
  return planDispatch({
    waiting,
    replicas,
    choose: (r, candidates) => router.choose(blockHashes(r.tokens), r.tokens.length, candidates),
    reusableTokens: (r, i) => reusableBlocks(index, i, blockHashes(r.tokens)) * BLOCK_TOKENS,
    lastReplicaOf: (id) => homes[id],
    allowed: () => true,
    cacheHoldMs: 500,
  });
}

/** Every order of `items`. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

describe('borrowing another replica’s saved prefix', () => {
  it('binds a turn at once to a free replica that borrows it, instead of holding it for the busy replica that saved it', () => {
    const index = savedOnZero();
    const all = [0, 1, 2, 3];
    for (const order of permutations([replica(0, 2, all), replica(1, 2, all), replica(2, 1, all), replica(3, 1, all)])) {
      const bound = plan(new Router(index), index, [turn()], order);
      expect(bound.nextHoldEndsInMs).toBeNull();
      expect(bound.bindings).toHaveLength(1);
      const { decision } = bound.bindings[0]!;
      // Replicas 2 and 3 tie (each would borrow the same entry); the lower index wins in every order.
      expect(decision).toMatchObject({
        replica: 2,
        cachedTokens: 0,
        prefillTokens: 80,
        restore: { tokens: 640, tier: 'ram', entry: 7, borrow: { replica: 0 } },
      });
    }
  });

  it('without lenders (a remote replica free, or a llama-server child lending no slot files) the turn still waits for the replica that saved it', () => {
    const index = savedOnZero();
    const all = [0, 1, 2];
    const held = plan(new Router(index), index, [turn(100)], [replica(0, 2, all), replica(1, 2, all), replica(2, 1, all, { borrowFrom: [] })]);
    expect(held.bindings).toEqual([]);
    expect(held.nextHoldEndsInMs).toBe(400);
    // A lender that is not compatible with the free one (another layout) counts nothing either.
    const other = plan(new Router(index), index, [turn(100)], [replica(0, 2, all), replica(1, 2, all), replica(2, 1, all, { borrowFrom: [1] })]);
    expect(other.bindings).toEqual([]);
  });

  it('costs a borrow as a restore: cheaper than prefilling, dearer than a slot hit, at the borrower’s measured rate', () => {
    const index = savedOnZero();
    index.setSlot(3, 0, blockHashes(turnTokens)); // replica 3 holds the whole turn in a slot
    const router = new Router(index);
    const blocks = blockHashes(turnTokens);
    const all = [0, 1, 2, 3];
    const measured = { prefillTokensPerMs: 1 };
    const borrow = router.choose(blocks, turnTokens.length, [replica(1, 0, all, measured)])!;
    expect(borrow.restore).toEqual({ tokens: 640, tier: 'ram', entry: 7, borrow: { replica: 0 } });
    expect(borrow.cost).toBeCloseTo(80 + 640 * ASSUMED_RESTORE_SHARE.ram);
    expect(router.choose(blocks, turnTokens.length, [replica(1, 0, all, { ...measured, restoreMsPerToken: { ram: 0.01 } })])!.cost).toBeCloseTo(80 + 6.4);
    // Among a prefill (no lenders), a borrow and a slot hit, in every order: the slot hit, then the borrow.
    const three = [replica(1, 0, all, measured), replica(2, 0, all, { ...measured, borrowFrom: [] }), replica(3, 0, all, measured)];
    for (const order of permutations(three)) expect(router.choose(blocks, turnTokens.length, order)!.replica).toBe(3);
    for (const order of permutations(three.slice(0, 2)))
      expect(router.choose(blocks, turnTokens.length, order)!).toMatchObject({ replica: 1, prefillTokens: 80 });
  });

  it('restores its own entry rather than borrowing an equal one, and borrows the longest of several owners', () => {
    const index = savedOnZero();
    const router = new Router(index);
    const all = [0, 1, 2];
    index.setSlot(1, 1, blockHashes(conversation));
    index.saveSlot(1, 1, 3, 'ram', conversation.length / BLOCK_TOKENS);
    index.setSlot(1, 1, []);
    expect(router.choose(blockHashes(turnTokens), turnTokens.length, [replica(1, 0, all)])!.restore).toEqual({ tokens: 640, tier: 'ram', entry: 3 });
    // Replica 2 saved the whole turn (720 tokens: 11 blocks); replica 1 borrows that rather than restore its own 10.
    index.setSlot(2, 0, blockHashes(turnTokens));
    index.saveSlot(2, 0, 5, 'disk', 11);
    expect(router.choose(blockHashes(turnTokens), turnTokens.length, [replica(1, 0, all)])!.restore).toEqual({
      tokens: 704,
      tier: 'disk',
      entry: 5,
      borrow: { replica: 2 },
    });
  });

  it('with measured rates, sends the turn to the free owner restoring its own entry rather than to a less busy replica borrowing it, in every order', () => {
    const index = savedOnZero();
    const all = [0, 1, 2];
    const measured = { prefillTokensPerMs: 1 };
    for (const order of permutations([replica(0, 1, all, measured), replica(1, 0, all, measured), replica(2, 0, all, measured)])) {
      const bound = plan(new Router(index), index, [turn()], order, {});
      expect(bound.bindings[0]!.decision).toMatchObject({ replica: 0, restore: { tokens: 640, tier: 'ram' } });
      expect(bound.bindings[0]!.decision.restore?.borrow).toBeUndefined();
    }
    // Before rates are measured a running request costs more than the restore saves: a free replica borrows.
    expect(plan(new Router(index), index, [turn()], [replica(0, 1, all), replica(1, 0, all)], {}).bindings[0]!.decision).toMatchObject({
      replica: 1,
      restore: { entry: 7, borrow: { replica: 0 } },
    });
  });

  it('lets a llama-server child borrow another’s slot files (disk) and never its prompt cache (RAM), which cannot be read from outside', () => {
    const index = savedOnZero();
    const all = [0, 1];
    const llamaServer = { borrowTiers: ['disk'] as const };
    // Replica 0's prompt cache holds the conversation (RAM, mirrored): a free llama-server replica cannot take it, so the turn waits.
    const held = plan(new Router(index), index, [turn(100)], [replica(0, 2, all, llamaServer), replica(1, 1, all, llamaServer)]);
    expect(held.bindings).toEqual([]);
    // Replica 0 also lent it as a slot file: replica 1 borrows that, at once.
    index.saveBlocks(0, 2 ** 30, 'disk', blockHashes(conversation), { tokens: 640, bytes: 1, conversationId: 'c' });
    const bound = plan(new Router(index), index, [turn(100)], [replica(0, 2, all, llamaServer), replica(1, 1, all, llamaServer)]);
    expect(bound.bindings[0]!.decision).toMatchObject({ replica: 1, restore: { tokens: 640, tier: 'disk', entry: 2 ** 30, borrow: { replica: 0 } } });
    // Its own RAM entries still count for itself.
    expect(new Router(index).choose(blockHashes(turnTokens), turnTokens.length, [replica(0, 0, all, llamaServer)])!.restore).toMatchObject({
      tier: 'ram',
      entry: 7,
    });
  });

  it('never borrows under round-robin or least-loaded (the baselines keep each engine to its own cache)', () => {
    const index = savedOnZero();
    const all = [0, 1, 2];
    for (const policy of ['round-robin', 'least-loaded'] as const) {
      const decision = new Router(index, policy).choose(blockHashes(turnTokens), turnTokens.length, [replica(1, 0, all), replica(2, 1, all)])!;
      expect(decision.restore).toBeUndefined();
      expect(decision.prefillTokens).toBe(turnTokens.length);
    }
  });

  it('refuses a malformed borrow hint at the engine’s boundary, naming the field', () => {
    const dirs = { ram: '/dev/shm/manifold-prefix-ram/engine-1', disk: '/data/prefix-cache/engine-1' };
    const parse = (borrow: unknown) => engineRequestSchema.safeParse({ type: 'generate', id: 1, request: { tokens: [1], borrow } });
    expect(parse({ entry: 3, tier: 'disk', dirs }).success).toBe(true);
    for (const [borrow, field] of [
      [{ entry: -1, tier: 'ram', dirs }, 'entry'],
      [{ entry: 3, tier: 'tape', dirs }, 'tier'],
      [{ entry: 3, tier: 'ram', dirs: { ram: '', disk: dirs.disk } }, 'dirs'],
    ] as const) {
      const result = parse(borrow);
      expect(result.success).toBe(false);
      expect(result.error!.issues[0]!.path).toContain(field);
    }
  });

  it('keeps the owner’s entry in core’s mirror after another replica borrowed it, and the borrower’s own entries too', () => {
    const routing = new RoutingState('prefix');
    const started = (prefixCache: StartedInfo['prefixCache']): StartedInfo => ({
      slot: 0,
      reusedTokens: 640,
      queuedMs: 0,
      ...(prefixCache ? { prefixCache } : {}),
    });
    const done = (held: number) => ({
      slot: 0,
      finishReason: 'length' as const,
      stoppedBy: null,
      text: '',
      completionTokens: [],
      usage: { promptTokens: held, completionTokens: 0 },
      reusedTokens: 0,
      heldTokens: held,
      timings: { queuedMs: 0, prefillMs: 0, decodeMs: 0, prefillTokens: 0, decodeTokensPerSecond: 0 },
    });
    const other = tokens(640, 5);
    for (const [r, prompt] of [
      [0, conversation],
      [1, other],
    ] as const) {
      routing.noteDone(r, prompt, blockHashes(prompt), done(prompt.length), undefined);
      // Each replica saves its slot as its entry 7 (ids are per engine) when another conversation takes it.
      routing.noteStarted(
        r,
        { slot: 0, reusedTokens: 0, queuedMs: 0, prefixCache: { moves: [{ entry: 7, tier: 'ram', fromSlot: 0, tokens: prompt.length }] } },
        blockHashes(tokens(70, 8)),
      );
    }
    const blocks = blockHashes(turnTokens);
    routing.noteStarted(2, started({ moves: [], restored: { entry: 7, tier: 'ram', tokens: 640, ms: 3, borrowed: true } }), blocks);
    expect(routing.reusableTokens(0, blocks)).toBe(640);
    expect(routing.reusableTokens(1, blockHashes(other))).toBe(640);
    expect(routing.cachedTokens(2, blocks)).toBe(640);
    // An own restore still takes the entry out of the owner's mirror.
    routing.noteStarted(0, started({ moves: [], restored: { entry: 7, tier: 'ram', tokens: 640, ms: 3 } }), blocks);
    expect(routing.cachedTokens(0, blocks)).toBe(640);
    expect(routing.savedEntries(0, 'ram')).toEqual([]);
  });

  it('follows a llama-server child’s slot files as its disk tier, and a slot restored from one without mirroring a save of what it held', () => {
    const routing = new RoutingState('prefix');
    const limits = { limits: { budgetBytes: 10 ** 9, bytesPerToken: 1 }, promptTokens: turnTokens.length };
    const blocks = blockHashes(conversation);
    routing.noteShelved(0, { entry: 2 ** 30, blocks, tokens: 640, bytes: 5, dropped: [] }, 'c');
    expect(routing.savedEntries(0, 'disk')).toEqual([{ entry: 2 ** 30, tokens: 640, bytes: 5, conversationId: 'c' }]);
    expect(routing.reusableTokens(0, blockHashes(turnTokens))).toBe(640);
    routing.noteShelved(0, { entry: 2 ** 30 + 1, blocks: blockHashes(tokens(640, 3)), tokens: 640, bytes: 5, dropped: [2 ** 30] }, 'd');
    expect(routing.savedEntries(0, 'disk').map((e) => e.entry)).toEqual([2 ** 30 + 1]);
    // Replica 1's slot 0 held another conversation; a slot file restored there, the request kept 640 tokens.
    const otherHistory = tokens(640, 7);
    routing.noteDone(
      1,
      otherHistory,
      blockHashes(otherHistory),
      {
        slot: 0,
        finishReason: 'length',
        stoppedBy: null,
        text: '',
        completionTokens: [],
        usage: { promptTokens: 640, completionTokens: 0 },
        reusedTokens: 0,
        heldTokens: 640,
        timings: { queuedMs: 0, prefillMs: 0, decodeMs: 0, prefillTokens: 0, decodeTokensPerSecond: 0 },
      },
      undefined,
    );
    routing.noteStarted(
      1,
      { slot: 0, reusedTokens: 640, queuedMs: 0, prefixCache: { moves: [], restored: { entry: 2 ** 30, tier: 'disk', tokens: 640, ms: 2, borrowed: true } } },
      blockHashes(turnTokens),
      limits,
    );
    expect(routing.cachedTokens(1, blockHashes(turnTokens))).toBe(640);
    // A restore overwrites the slot without llama-server's prompt cache: no RAM entry of what it held.
    expect(routing.savedEntries(1, 'ram')).toEqual([]);
  });
});
