/**
 * Pure unit tests of core's mirror of a llama-server child's host-memory prompt cache (no engines; the
 * integration test in llama-server-engine.test.ts checks a real child does what is mirrored): a slot taken
 * by another conversation is saved, a follow-up of its own conversation saves nothing, a reply that kept
 * more than its slot held takes the entry out, entries contained in a newer one go, the budget drops the
 * oldest; and the routing state turns it into RAM-tier entries the router sends a returning turn to.
 */
import { describe, expect, it } from 'vitest';
import type { GenerateDone } from '../../common/engine-protocol.js';
import { RoutingState } from '../../core/replicas/routing-state.js';
import { BLOCK_TOKENS, blockHashes } from '../../core/router/block-hash.js';
import { HostPromptCacheMirror } from '../../core/router/host-prompt-cache.js';
import type { RouteCandidate } from '../../core/router/router.js';

const tokens = (n: number, seed: number) => Array.from({ length: n }, (_, i) => (i * 31 + seed * 7919) % 5000);
const blocks = (n: number, seed: number) => blockHashes(tokens(n * BLOCK_TOKENS, seed));
const roomy = { budgetBytes: 1e12, bytesPerToken: 1 };

/**
 * The mirror serving a request on slot 0, its moves read back as what they say: the entry saved from the
 * slot (its blocks and bytes), the entries dropped, the entry restored.
 */
function servedOnSlot0(mirror: HostPromptCacheMirror, before: readonly number[], prompt: readonly number[], promptTokens: number, reusedTokens: number) {
  const { moves, restored } = mirror.served(0, before, prompt, promptTokens, reusedTokens);
  const save = moves.find((m) => m.tier !== null);
  expect(save?.fromSlot ?? 0).toBe(0);
  return {
    saved: save ? { entry: save.entry, blocks: save.tokens! / BLOCK_TOKENS, bytes: save.bytes! } : null,
    dropped: moves.filter((m) => m.tier === null).map((m) => m.entry),
    restored: restored?.entry ?? null,
  };
}

describe('the mirror of a llama-server prompt cache', () => {
  it('saves a slot another conversation takes, not one its own conversation goes on in, and names what a long reuse restored', () => {
    const mirror = new HostPromptCacheMirror(roomy);
    const a = blocks(10, 1);
    const b = blocks(6, 2);
    // b takes the slot that held a: nothing shared, so llama-server picked it least recently used and saved a.
    expect(servedOnSlot0(mirror, a, b, b.length * BLOCK_TOKENS, 0)).toEqual({
      saved: { entry: 0, blocks: 10, bytes: 10 * BLOCK_TOKENS },
      dropped: [],
      restored: null,
    });
    // b's next turn on its own slot: the slot's tokens are a prefix of the prompt, nothing saved.
    const b2 = blockHashes([...tokens(6 * BLOCK_TOKENS, 2), ...tokens(3 * BLOCK_TOKENS, 3)]);
    expect(servedOnSlot0(mirror, b, b2, b2.length * BLOCK_TOKENS, b.length * BLOCK_TOKENS)).toEqual({ saved: null, dropped: [], restored: null });
    // a's next turn on the slot holding b2: b2 is saved, and the reply kept 10 blocks the slot did not hold: a was loaded.
    const a2 = blockHashes([...tokens(10 * BLOCK_TOKENS, 1), ...tokens(2 * BLOCK_TOKENS, 4)]);
    expect(servedOnSlot0(mirror, b2, a2, a2.length * BLOCK_TOKENS, 10 * BLOCK_TOKENS)).toEqual({
      saved: { entry: 1, blocks: 9, bytes: 9 * BLOCK_TOKENS },
      dropped: [],
      restored: 0,
    });
    // The same with a reuse no longer than what the slot shared: nothing was loaded (a is gone already anyway).
    expect(servedOnSlot0(mirror, a2, b2, b2.length * BLOCK_TOKENS, 0).restored).toBeNull();
  });

  it('takes out the entry sharing as much of the prompt as the reply kept, not one sharing more', () => {
    const mirror = new HostPromptCacheMirror(roomy);
    const long = blocks(10, 1);
    // Entry 0 holds 4 blocks of `long` and one of its own; entry 1, not containing it, 8 blocks of `long` and two others.
    const four = blockHashes([...tokens(4 * BLOCK_TOKENS, 1), ...tokens(BLOCK_TOKENS, 6)]);
    expect(servedOnSlot0(mirror, four, blocks(1, 2), BLOCK_TOKENS, 0).saved).toMatchObject({ entry: 0 });
    const eight = blockHashes([...tokens(8 * BLOCK_TOKENS, 1), ...tokens(2 * BLOCK_TOKENS, 3)]);
    const other = blocks(1, 4);
    expect(servedOnSlot0(mirror, eight, other, BLOCK_TOKENS, 0).saved).toMatchObject({ entry: 1 });
    // A slot holding `other` serves `long` keeping 4 blocks: the 4-block entry was loaded.
    expect(servedOnSlot0(mirror, other, long, long.length * BLOCK_TOKENS, 4 * BLOCK_TOKENS).restored).toBe(0);
  });

  it('mirrors no save where the blocks leave it open whether llama-server made one', () => {
    const mirror = new HostPromptCacheMirror(roomy);
    // The slot held 2 blocks (128–191 tokens), 1 of them shared: llama-server keeps 64–127 of them, half or more at some lengths.
    const held = blocks(2, 1);
    const prompt = blockHashes([...tokens(BLOCK_TOKENS, 1), ...tokens(BLOCK_TOKENS, 5)]);
    expect(servedOnSlot0(mirror, held, prompt, prompt.length * BLOCK_TOKENS, BLOCK_TOKENS).saved).toBeNull();
  });

  it('keeps a slot a similar prompt keeps half of, and saves one it keeps less of', () => {
    const mirror = new HostPromptCacheMirror(roomy);
    const held = blocks(8, 1);
    const half = blockHashes([...tokens(4 * BLOCK_TOKENS, 1), ...tokens(4 * BLOCK_TOKENS, 5)]);
    expect(servedOnSlot0(mirror, held, half, half.length * BLOCK_TOKENS, 4 * BLOCK_TOKENS).saved).toBeNull();
    const less = blockHashes([...tokens(3 * BLOCK_TOKENS, 1), ...tokens(5 * BLOCK_TOKENS, 6)]);
    expect(servedOnSlot0(mirror, held, less, less.length * BLOCK_TOKENS, 3 * BLOCK_TOKENS).saved).toMatchObject({ blocks: 8 });
  });

  it('skips a slot an entry holds whole, drops entries a new one contains, and drops the oldest past its budget', () => {
    const mirror = new HostPromptCacheMirror({ budgetBytes: 20 * BLOCK_TOKENS, bytesPerToken: 1 });
    const a = blocks(8, 1);
    const other = (seed: number) => blocks(1, seed);
    expect(servedOnSlot0(mirror, a.slice(0, 4), other(10), BLOCK_TOKENS, 0).saved).toMatchObject({ entry: 0, blocks: 4 });
    // a contains entry 0: saving a drops it.
    expect(servedOnSlot0(mirror, a, other(11), BLOCK_TOKENS, 0)).toMatchObject({ saved: { entry: 1, blocks: 8 }, dropped: [0] });
    // A slot holding a prefix of entry 1 is already in the cache.
    expect(servedOnSlot0(mirror, a.slice(0, 5), other(12), BLOCK_TOKENS, 0).saved).toBeNull();
    // 8 + 8 blocks fit in 20; 8 more push out the oldest (entry 1).
    expect(servedOnSlot0(mirror, blocks(8, 2), other(13), BLOCK_TOKENS, 0)).toMatchObject({ saved: { entry: 2 }, dropped: [] });
    expect(servedOnSlot0(mirror, blocks(8, 3), other(14), BLOCK_TOKENS, 0)).toMatchObject({ saved: { entry: 3 }, dropped: [1] });
    // An entry larger than the whole budget is not kept.
    expect(servedOnSlot0(mirror, blocks(21, 4), other(15), BLOCK_TOKENS, 0)).toEqual({ saved: null, dropped: [], restored: null });
  });
});

describe('routing with the mirror', () => {
  const done = (slot: number, prompt: number[], reusedTokens: number): GenerateDone => ({
    finishReason: 'length',
    stoppedBy: null,
    text: '',
    completionTokens: [],
    usage: { promptTokens: prompt.length, completionTokens: 0 },
    slot,
    reusedTokens,
    heldTokens: prompt.length,
    timings: { queuedMs: 0, prefillMs: 1, decodeMs: 0, prefillTokens: prompt.length - reusedTokens, decodeTokensPerSecond: 0 },
  });
  const candidate = (replica: number): RouteCandidate => ({
    replica,
    running: 0,
    slots: 1,
    prefillTokensPerMs: null,
    pendingPrefillTokens: 0,
    restoreMsPerToken: {},
  });
  /** A request served on the replica's slot 0, reported as a llama-server child reports it: started and done at its last chunk. */
  const serve = (state: RoutingState, replica: number, prompt: number[], reused = 0, hostCache = true) => {
    state.noteStarted(
      replica,
      { slot: 0, reusedTokens: reused, queuedMs: 0 },
      blockHashes(prompt),
      hostCache ? { limits: roomy, promptTokens: prompt.length } : null,
    );
    state.noteDone(replica, prompt, blockHashes(prompt), done(0, prompt, reused), undefined);
  };

  it('sends a turn back to the llama-server replica whose prompt cache saved its history, and forgets it when the child restarts', () => {
    const state = new RoutingState('prefix');
    const a = tokens(6 * BLOCK_TOKENS, 1);
    serve(state, 0, a);
    serve(state, 1, tokens(6 * BLOCK_TOKENS, 2));
    // Another conversation takes replica 0's only slot: a is in its prompt cache now, not in a slot.
    serve(state, 0, tokens(6 * BLOCK_TOKENS, 3));
    const next = [...a, ...tokens(BLOCK_TOKENS, 4)];
    const candidates = [candidate(0), candidate(1)];
    expect(state.cachedTokens(0, blockHashes(next))).toBe(0);
    expect(state.reusableTokens(0, blockHashes(next))).toBe(a.length);
    expect(state.savedEntries(0, 'ram')).toEqual([{ entry: 0, tokens: a.length, bytes: a.length, conversationId: null }]);
    expect(state.choose(blockHashes(next), next.length, candidates)).toMatchObject({
      replica: 0,
      prefillTokens: BLOCK_TOKENS,
      restore: { tokens: a.length, tier: 'ram' },
    });
    // The child restored it (cache_n covers a): the entry left its cache for the slot.
    serve(state, 0, next, a.length);
    expect(state.savedEntries(0, 'ram').map((e) => e.tokens)).toEqual([6 * BLOCK_TOKENS]);
    // A resize restarts the child: its prompt cache is gone, and so is the mirror's; the same saves are mirrored afresh.
    state.remap(0, { kept: 0, dropped: 0, slots: [] });
    expect(state.savedEntries(0, 'ram')).toEqual([]);
    serve(state, 0, tokens(6 * BLOCK_TOKENS, 3));
    serve(state, 0, a);
    expect(state.savedEntries(0, 'ram').map((e) => [e.entry, e.tokens])).toEqual([[0, 6 * BLOCK_TOKENS]]);
  });

  it('mirrors nothing for a replica without a prompt cache of its own', () => {
    const state = new RoutingState('prefix');
    const a = tokens(6 * BLOCK_TOKENS, 1);
    serve(state, 0, a, 0, false);
    serve(state, 0, tokens(6 * BLOCK_TOKENS, 2), 0, false);
    expect(state.reusableTokens(0, blockHashes(a))).toBe(0);
    expect(state.savedEntries(0, 'ram')).toEqual([]);
  });
});
