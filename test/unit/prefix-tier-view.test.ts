/**
 * The slot view's prefix-cache tiers as data (no engines): core's exact index keeps each saved entry's
 * tokens, bytes and conversation as `started` reports move it, the contract's replica view accepts that
 * shape and refuses a malformed one by name, and the dashboard's selector turns it into rows.
 */
import { describe, expect, it } from 'vitest';
import { contract, type EventPayload } from '../../common/contract.js';
import type { StartedInfo } from '../../core/engine/engine-client.js';
import { RoutingState } from '../../core/replicas/routing-state.js';
import { blockHashes } from '../../core/router/block-hash.js';
import { selectPrefixTierRows } from '../../renderer/src/store/workstation-slice.js';

const tokens = (n: number, seed = 0) => Array.from({ length: n }, (_, i) => (i * 31 + seed) % 1000);
const a = tokens(64 * 6, 1);
const b = tokens(64 * 5, 2);
const c = tokens(64 * 4, 3);
const started = (slot: number, prefixCache: StartedInfo['prefixCache']): StartedInfo => ({
  slot,
  reusedTokens: 0,
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
const serve = (routing: RoutingState, slot: number, prompt: number[], conversation: string | undefined, prefixCache?: StartedInfo['prefixCache']) => {
  routing.noteStarted(0, started(slot, prefixCache), blockHashes(prompt));
  routing.noteDone(0, prompt, blockHashes(prompt), done(slot, prompt.length), conversation);
};
const replicaView = (prefixTiers: unknown) => ({
  replica: 0,
  alive: true,
  running: 0,
  routed: 3,
  slots: 1,
  state: 'ready',
  latchReason: null,
  gpus: [],
  cpus: [],
  cacheHitTokens: 0,
  promptTokens: 0,
  completionTokens: 0,
  pid: 42,
  remote: null,
  prefixTiers,
  sizes: null,
  reEvaluation: null,
});

describe('the prefix cache in the slot view', () => {
  it("keeps each saved entry's tokens, bytes and conversation through spills, restores and a rebuild's remap", () => {
    const routing = new RoutingState('prefix');
    serve(routing, 0, a, 'conversation-a');
    // B takes the slot: A's state is saved to RAM; then C: B's is saved, A's spills to disk.
    serve(routing, 0, b, 'conversation-b', { moves: [{ entry: 0, tier: 'ram', fromSlot: 0, tokens: a.length, bytes: 6_000 }] });
    serve(routing, 0, c, undefined, {
      moves: [
        { entry: 1, tier: 'ram', fromSlot: 0, tokens: b.length, bytes: 5_000 },
        { entry: 0, tier: 'disk' },
      ],
    });
    expect(routing.savedEntries(0, 'ram')).toEqual([{ entry: 1, tokens: b.length, bytes: 5_000, conversationId: 'conversation-b' }]);
    expect(routing.savedEntries(0, 'disk')).toEqual([{ entry: 0, tokens: a.length, bytes: 6_000, conversationId: 'conversation-a' }]);
    expect(routing.savedEntries(1, 'ram')).toEqual([]);

    // A returns: C's state (no conversation id: an API request) is saved, A's is restored and leaves the cache.
    serve(routing, 0, a, 'conversation-a', {
      moves: [{ entry: 2, tier: 'ram', fromSlot: 0, tokens: c.length, bytes: 4_000 }],
      restored: { entry: 0, tier: 'disk', tokens: a.length, ms: 3 },
    });
    expect(routing.savedEntries(0, 'ram').map((e) => [e.entry, e.conversationId])).toEqual([
      [1, 'conversation-b'],
      [2, null],
    ]);
    expect(routing.savedEntries(0, 'disk')).toEqual([]);

    // A rebuild moves slot 0 to slot 1 (and the engine drops its saved states): the slot's conversation goes with it.
    routing.remap(0, { kept: 1, dropped: 0, slots: [{ from: 0, to: 1, tokens: a.length, restoredBy: 'state_file' }] });
    expect(routing.savedEntries(0, 'ram')).toEqual([]);
    routing.noteStarted(0, started(0, { moves: [{ entry: 3, tier: 'ram', fromSlot: 1, tokens: a.length, bytes: 6_000 }] }), blockHashes(b));
    expect(routing.savedEntries(0, 'ram')).toEqual([{ entry: 3, tokens: a.length, bytes: 6_000, conversationId: 'conversation-a' }]);
    routing.forgetReplica(0);
    expect(routing.savedEntries(0, 'ram')).toEqual([]);
  });

  it('the contract accepts the replica view with its tiers, and refuses a malformed tier naming the field', () => {
    const routing = new RoutingState('prefix');
    serve(routing, 0, a, 'conversation-a');
    serve(routing, 0, b, 'conversation-b', { moves: [{ entry: 0, tier: 'ram', fromSlot: 0, tokens: a.length, bytes: 6_000 }] });
    const ram = routing.savedEntries(0, 'ram');
    const tiers = [
      { tier: 'ram', entries: ram, bytes: 6_000, budgetBytes: 512 * 2 ** 20 },
      { tier: 'disk', entries: [], bytes: 0, budgetBytes: 2 * 2 ** 30 },
    ];
    const replicas = contract.events.replicas;
    expect(replicas.parse([replicaView(tiers)])[0]!.prefixTiers).toEqual(tiers);
    expect(replicas.parse([replicaView(null)])[0]!.prefixTiers).toBeNull();

    const refused = (bad: unknown): string => {
      const result = replicas.safeParse([replicaView(bad)]);
      expect(result.success).toBe(false);
      return result.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    };
    expect(refused([{ ...tiers[0], tier: 'gpu' }])).toMatch(/^0\.prefixTiers\.0\.tier: /);
    expect(refused([{ ...tiers[0], bytes: -1 }])).toMatch(/^0\.prefixTiers\.0\.bytes: /);
    expect(refused([{ ...tiers[0], entries: [{ entry: 0, tokens: 10, bytes: 1 }] }])).toMatch(/^0\.prefixTiers\.0\.entries\.0\.conversationId: /);
    expect(refused(undefined)).toMatch(/^0\.prefixTiers: /);
  });

  it("turns each replica's tiers into the dashboard's rows, and none for a replica without a cache", () => {
    const entry = (n: number, conversationId: string | null, tokens: number) => ({ entry: n, tokens, bytes: 1_000, conversationId });
    const replicas = [
      replicaView([
        { tier: 'ram', entries: [entry(4, 'abcdef1234', 300), entry(5, null, 128)], bytes: 2_000, budgetBytes: 4_096 },
        { tier: 'disk', entries: [], bytes: 0, budgetBytes: 8_192 },
      ]),
      { ...replicaView(null), replica: 1 },
    ] as EventPayload<'replicas'>;
    expect(selectPrefixTierRows({ replicas })).toEqual([
      // The newest saved entries first.
      {
        key: '0:ram',
        replica: 0,
        tier: 'RAM',
        entries: 2,
        bytes: 2_000,
        budgetBytes: 4_096,
        saved: [
          { key: 5, conversation: '—', tokens: 128 },
          { key: 4, conversation: 'abcdef12', tokens: 300 },
        ],
        more: 0,
      },
      { key: '0:disk', replica: 0, tier: 'disk', entries: 0, bytes: 0, budgetBytes: 8_192, saved: [], more: 0 },
    ]);
  });
});
