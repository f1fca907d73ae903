/**
 * Pure unit tests of the tiered prefix cache's bookkeeping: the engine's tiers and LRU (prefix-tiers.ts),
 * core's mirror of them in the exact index as `started` reports move entries, and the router's cost of a
 * restore (no engines).
 */
import { describe, expect, it } from 'vitest';
import type { StartedInfo } from '../../core/engine/engine-client.js';
import { RoutingState } from '../../core/replicas/routing-state.js';
import { BLOCK_TOKENS, blockHashes } from '../../core/router/block-hash.js';
import { ExactPrefixIndex } from '../../core/router/prefix-index.js';
import { ASSUMED_RESTORE_SHARE } from '../../core/router/route-costs.js';
import { Router, type RouteCandidate } from '../../core/router/router.js';
import { PrefixTiers } from '../../engine-bin/prefix-tiers.js';

const tokens = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => (i * 31 + seed) % 1000);

describe('prefix tiers', () => {
  it('refresh: says whether a kept entry already holds all of the tokens, and makes it the most recently used', () => {
    const tiers = new PrefixTiers({ ramBytes: 200, diskBytes: 0 });
    const a = tiers.admit(tokens(100, 1), 100).entry!;
    tiers.admit(tokens(100, 2), 100);
    expect(tiers.refresh(tokens(100, 3))).toBe(false);
    expect(tiers.refresh(tokens(100, 1).concat(7))).toBe(false);
    // a holds these (all of them, or a prefix of them): nothing to save, and a is now the newest...
    expect(tiers.refresh(tokens(100, 1))).toBe(true);
    expect(tiers.refresh(tokens(60, 1))).toBe(true);
    // ...so a third entry pushes out the other one, not a (no disk: it is dropped).
    expect(tiers.admit(tokens(100, 4), 100).drop.map((e) => e.tokens)).toEqual([tokens(100, 2)]);
    expect(tiers.list().map((e) => e.id)).toContain(a.id);
  });

  it('keeps new entries in RAM, spills the least recently used to disk, and drops disk’s least recently used', () => {
    const tiers = new PrefixTiers({ ramBytes: 200, diskBytes: 250 });
    const a = tiers.admit(tokens(100, 1), 100);
    const b = tiers.admit(tokens(100, 2), 100);
    expect([a.entry?.tier, b.entry?.tier]).toEqual(['ram', 'ram']);
    expect([...a.spill, ...a.drop, ...b.spill, ...b.drop]).toEqual([]);

    const c = tiers.admit(tokens(100, 3), 100);
    expect(c.entry?.tier).toBe('ram');
    expect(c.spill.map((e) => e.id)).toEqual([a.entry!.id]);
    expect(tiers.bytesIn('ram')).toBe(200);
    expect(tiers.bytesIn('disk')).toBe(100);

    tiers.admit(tokens(100, 4), 100); // spills b: disk holds a and b
    const e = tiers.admit(tokens(100, 5), 100); // spills c: disk over 250, a (oldest) is dropped
    expect(e.spill.map((x) => x.id)).toEqual([c.entry!.id]);
    expect(e.drop.map((x) => x.id)).toEqual([a.entry!.id]);
    expect(tiers.list().map((x) => [x.id, x.tier])).toEqual([
      [1, 'disk'],
      [2, 'disk'],
      [3, 'ram'],
      [4, 'ram'],
    ]);
  });

  it('sends an entry larger than RAM straight to disk, and keeps none larger than both', () => {
    const tiers = new PrefixTiers({ ramBytes: 50, diskBytes: 500 });
    expect(tiers.admit(tokens(100, 1), 100).entry?.tier).toBe('disk');
    expect(tiers.admit(tokens(100, 2), 600).entry).toBeNull();
    const off = new PrefixTiers({ ramBytes: 0, diskBytes: 0 });
    expect(off.enabled).toBe(false);
    expect(off.admit(tokens(100), 1).entry).toBeNull();
  });

  it('finds the entry sharing the longest prefix, replaces a prefix by its continuation, and keeps no prefix of a kept entry', () => {
    const tiers = new PrefixTiers({ ramBytes: 1000, diskBytes: 0 });
    const turn1 = tokens(100, 1);
    const first = tiers.admit(turn1, 10).entry!;
    const other = tiers.admit(tokens(100, 2), 10).entry!;
    const turn2 = [...turn1, ...tokens(50, 7)];
    expect(tiers.longestMatch([...turn1, 5, 5])).toMatchObject({ entry: { id: first.id }, commonPrefix: 100 });
    expect(tiers.longestMatch([999_999])).toBeNull();

    const longer = tiers.admit(turn2, 15);
    expect(longer.drop.map((e) => e.id)).toEqual([first.id]);
    expect(tiers.list().map((e) => e.id)).toEqual([other.id, longer.entry!.id]);
    expect(tiers.admit(turn1, 10).entry).toBeNull();
    expect(tiers.list()).toHaveLength(2);

    tiers.take(longer.entry!.id);
    expect(tiers.longestMatch(turn2)).toBeNull();
    expect(tiers.clear().map((e) => e.id)).toEqual([other.id]);
    // Ids go on after a clear (core forgets the old ones at the rebuild's remap).
    expect(new PrefixTiers({ ramBytes: 1, diskBytes: 0 }, tiers.idAfter).admit([1], 1).entry!.id).toBe(longer.entry!.id + 1);
  });
});

describe("core's mirror of the tiers", () => {
  const a = tokens(64 * 6, 1);
  const b = tokens(64 * 6, 2);
  const started = (slot: number, reusedTokens: number, prefixCache?: StartedInfo['prefixCache']): StartedInfo => ({
    slot,
    reusedTokens,
    queuedMs: 0,
    ...(prefixCache ? { prefixCache } : {}),
  });
  const done = (slot: number, heldTokens: number) => ({
    finishReason: 'stop' as const,
    stoppedBy: null,
    text: '',
    completionTokens: [],
    usage: { promptTokens: heldTokens, completionTokens: 0 },
    slot,
    reusedTokens: 0,
    heldTokens,
    timings: { queuedMs: 0, prefillMs: 0, decodeMs: 0, prefillTokens: 0, decodeTokensPerSecond: 0 },
  });

  it('finds the longest saved entry among many that share a start, in the tiers asked for, and forgets each as it leaves', () => {
    const promptTokens = (length: number, seed: number): number[] => Array.from({ length }, (_, i) => seed * 1000 + i);
    const system = promptTokens(256, 1);
    const index = new ExactPrefixIndex();
    // 200 conversations saved behind one 4-block system prompt, each 2 blocks more, entry 1000 + n; the last one on disk.
    for (let n = 0; n < 200; n++)
      index.saveBlocks(0, 1000 + n, n === 199 ? 'disk' : 'ram', blockHashes([...system, ...promptTokens(128, 10 + n)]), {
        tokens: 0,
        bytes: 0,
        conversationId: null,
      });
    const turn = (n: number) => blockHashes([...system, ...promptTokens(128, 10 + n), ...promptTokens(64, 999)]);
    expect(index.matchedSaved(0, turn(57))).toEqual({ blocks: 6, tier: 'ram', entry: 1057 });
    expect(index.matchedSaved(0, turn(199))).toEqual({ blocks: 6, tier: 'disk', entry: 1199 });
    // Only the disk tier (a llama-server child borrows slot files only): the RAM entry's start still matches, on disk.
    expect(index.matchedSaved(0, turn(57), ['disk'])).toEqual({ blocks: 4, tier: 'disk', entry: 1199 });
    // A new conversation matches the shared start only.
    expect(index.matchedSaved(0, blockHashes([...system, ...promptTokens(128, 5000)]))?.blocks).toBe(4);
    index.moveSaved(0, 1057, null);
    expect(index.matchedSaved(0, turn(57))?.blocks).toBe(4);
    for (let n = 0; n < 200; n++) index.moveSaved(0, 1000 + n, null);
    expect(index.matchedSaved(0, turn(3))).toBeNull();
    expect(index.size).toBe(0);
  });

  it('moves an evicted slot’s blocks into a saved entry, follows its spill, and puts them back in the slot at a restore', () => {
    const routing = new RoutingState('prefix');
    routing.noteDone(0, a, blockHashes(a), done(0, a.length), 'A');
    // It says the index gained a saved entry (the dispatcher re-plans held requests then); a start that saved nothing does not.
    expect(routing.noteStarted(0, started(0, 0, { moves: [{ entry: 0, tier: 'ram', fromSlot: 0, tokens: a.length }] }), blockHashes(b))).toBe(true);
    routing.noteDone(0, b, blockHashes(b), done(0, b.length), 'B');
    expect(routing.cachedTokens(0, blockHashes(a))).toBe(0);
    expect(routing.cachedTokens(0, blockHashes(b))).toBe(b.length);

    const index = new ExactPrefixIndex();
    index.setSlot(0, 0, blockHashes(a));
    index.saveSlot(0, 0, 7, 'ram', 4);
    index.setSlot(0, 0, []);
    expect(index.matchedSaved(0, blockHashes(a))).toEqual({ blocks: 4, tier: 'ram', entry: 7 });
    expect(index.size).toBe(4);
    index.moveSaved(0, 7, 'disk');
    expect(index.matchedSaved(0, blockHashes(a))).toEqual({ blocks: 4, tier: 'disk', entry: 7 });
    expect(index.matchedSaved(1, blockHashes(a))).toBeNull();
    index.moveSaved(0, 7, null);
    expect(index.matchedSaved(0, blockHashes(a))).toBeNull();
    expect(index.size).toBe(0);

    // A restore of A into the slot: the entry leaves the cache, the slot holds what the prompt kept.
    routing.noteStarted(
      0,
      started(0, a.length - 1, {
        moves: [{ entry: 1, tier: 'ram', fromSlot: 0, tokens: b.length }],
        restored: { entry: 0, tier: 'ram', tokens: a.length, ms: 2 },
      }),
      blockHashes(a),
    );
    expect(routing.cachedTokens(0, blockHashes(a))).toBe(5 * BLOCK_TOKENS);
    routing.forgetReplica(0);
    expect(routing.cachedTokens(0, blockHashes(b))).toBe(0);
    expect(routing.noteStarted(0, started(0, 0, { moves: [] }), blockHashes(b))).toBe(false);
  });

  it('costs a restore cheaper than a prefill and dearer than a slot hit, at its measured rate once known', () => {
    const index = new ExactPrefixIndex();
    const router = new Router(index);
    const prompt = blockHashes(a);
    index.setSlot(0, 0, prompt); // replica 0: a slot hit
    index.setSlot(1, 0, []);
    index.setSlot(1, 1, prompt);
    index.saveSlot(1, 1, 0, 'ram', prompt.length); // replica 1: the same prefix, saved in RAM
    index.setSlot(1, 1, []);
    const candidate = (replica: number, extra: Partial<RouteCandidate> = {}): RouteCandidate => ({
      replica,
      running: 0,
      slots: 2,
      prefillTokensPerMs: null,
      pendingPrefillTokens: 0,
      ...extra,
    });
    const cost = (replica: number, extra: Partial<RouteCandidate> = {}) => router.choose(prompt, a.length, [candidate(replica, extra)])!;

    expect(cost(0).cost).toBe(0);
    const restored = cost(1);
    expect(restored.restore).toEqual({ tokens: a.length, tier: 'ram', entry: 0 });
    expect(restored.cost).toBeCloseTo(a.length * ASSUMED_RESTORE_SHARE.ram);
    expect(cost(2).cost).toBe(a.length);
    expect(router.choose(prompt, a.length, [candidate(2), candidate(1), candidate(0)])!.replica).toBe(0);
    expect(router.choose(prompt, a.length, [candidate(2), candidate(1)])!.replica).toBe(1);

    const measured = { prefillTokensPerMs: 1 };
    expect(cost(1, { ...measured, restoreMsPerToken: { ram: 0.01 } }).cost).toBeCloseTo(a.length * 0.01);
    expect(cost(1, measured).cost).toBeCloseTo(a.length * ASSUMED_RESTORE_SHARE.ram);
  });
});
