/**
 * What the router reads: the prefix index, the replica that last served each conversation, and the router
 * itself with its policy and per-replica counts. The index is exact where the replica says which slot
 * served (local engines, llama-server and Manifold peers: a slot cut to what it kept at `started`, set to
 * what it holds at `done`, its engine's prefix-cache entries moved as its `started` reports say) and
 * estimated where it does not (OpenAI-style peers: the blocks it was sent,
 * LRU). A local llama-server child's host-memory prompt cache, which it does not report, is replayed from
 * its replies (router/host-prompt-cache.ts) as the moves an engine reports, so the index keeps it as RAM-tier
 * entries. A replica's blocks are forgotten when it dies or its link drops, and moved when a rebuild moves
 * prefixes between slots. Each slot's last conversation is kept too, so the dashboard can name whose a
 * saved entry is.
 */
import type { GenerateDone } from '../../common/engine-protocol.js';
import type { HostPromptCacheLimits, PrefixTier, SavedEntryView, TierMove } from '../../common/prefix-cache.js';
import type { PrefixReport } from '../../common/rebuild.js';
import type { StartedInfo } from '../engine/engine-client.js';
import type { RoutingPolicy } from '../config/run-config.js';
import type { ShelvedSlot } from '../kind/replica-driver.js';
import { BLOCK_TOKENS, blockHashes, sharedBlocks } from '../router/block-hash.js';
import { HostPromptCacheMirror, type HostPromptCacheMoves } from '../router/host-prompt-cache.js';
import { EstimatedPrefixIndex, ExactPrefixIndex, reusableBlocks, type PrefixIndex } from '../router/prefix-index.js';
import { Router, type RouteCandidate, type RouteDecision } from '../router/router.js';

/** A llama-server child's prompt cache as a request starts on it: the cache's limits, and the prompt's length in tokens. */
export interface HostPromptCacheContext {
  readonly limits: HostPromptCacheLimits;
  readonly promptTokens: number;
}

/** Conversations whose last replica is remembered for the router's tie-break (the oldest forgotten first). */
const CONVERSATIONS_REMEMBERED = 4096;

export class RoutingState {
  private readonly index = new ExactPrefixIndex();
  private readonly estimated = new EstimatedPrefixIndex();
  /** What the router sees: the longer of the two forms for each replica (a local replica has no estimate). */
  private readonly combined: PrefixIndex = combine(this.index, this.estimated);
  private readonly router: Router;
  /** The replica that last served each conversation id (insertion order = age). */
  private readonly conversationReplica = new Map<string, number>();
  /** The conversation each (replica, slot) last served, so a saved entry can say whose it is. */
  private readonly slotConversations = new Map<number, Map<number, string | null>>();
  /** Each llama-server child's prompt cache as mirrored from its replies (reset when the child restarts or exits). */
  private readonly hostCaches = new Map<number, HostPromptCacheMirror>();

  constructor(policy: RoutingPolicy) {
    this.router = new Router(this.combined, policy);
  }

  get policy(): RoutingPolicy {
    return this.router.currentPolicy;
  }

  setPolicy(policy: RoutingPolicy): void {
    this.router.setPolicy(policy);
  }

  choose(blocks: readonly number[], promptTokens: number, candidates: readonly RouteCandidate[]): RouteDecision | null {
    return this.router.choose(blocks, promptTokens, candidates);
  }

  noteRouted(replica: number): void {
    this.router.noteRouted(replica);
  }

  routedCount(replica: number): number {
    return this.router.routedCount(replica);
  }

  /** The conversation the router last sent to `slot` of `replica` (null: none said which, or none yet). */
  slotConversation(replica: number, slot: number): string | null {
    return this.slotConversations.get(replica)?.get(slot) ?? null;
  }

  lastReplicaOf(conversationId: string): number | undefined {
    return this.conversationReplica.get(conversationId);
  }

  /**
   * The request started: the engine's prefix cache moved entries (saving a slot's evicted blocks first)
   * and maybe restored one into the slot; the slot keeps only the blocks it shares with this prompt. A
   * llama-server child reports no moves (`hostPromptCache`: its cache's limits and the prompt's length);
   * they are mirrored from what the slot held and what the request kept. Returns whether the index gained
   * a saved entry (an evicted conversation that a request held for its replica may now borrow elsewhere).
   */
  noteStarted(replica: number, started: StartedInfo, promptBlocks: readonly number[], hostPromptCache: HostPromptCacheContext | null = null): boolean {
    const { slot, reusedTokens, prefixCache } = started;
    if (slot < 0) return false;
    const keepBlocks = Math.floor(reusedTokens / BLOCK_TOKENS);
    // A llama-server child's slot restored from a slot file before the request held what it kept, and its
    // prompt cache had no part in it (a restore overwrites the slot without saving it there): the mirror then
    // sees a slot that kept its prompt, and nothing is left to restore below.
    if (hostPromptCache && prefixCache?.restored) this.index.setSlot(replica, slot, promptBlocks.slice(0, keepBlocks));
    const { moves, restored }: { moves: readonly TierMove[]; restored: { entry: number; borrowed?: true } | null } = hostPromptCache
      ? this.mirrorHostCache(replica, slot, promptBlocks, reusedTokens, hostPromptCache)
      : { moves: prefixCache?.moves ?? [], restored: prefixCache?.restored ?? null };
    let saved = false;
    for (const move of moves) {
      if (move.fromSlot !== undefined && move.tier) {
        saved = true;
        const tokens = move.tokens ?? 0;
        const about = { tokens, bytes: move.bytes ?? 0, conversationId: this.slotConversations.get(replica)?.get(move.fromSlot) ?? null };
        this.index.saveSlot(replica, move.fromSlot, move.entry, move.tier, Math.floor(tokens / BLOCK_TOKENS), about);
      } else {
        this.index.moveSaved(replica, move.entry, move.tier);
      }
    }
    if (restored) {
      // A borrowed entry stays its owner's (the borrower linked the file); an own one left the cache for the slot.
      if (!restored.borrowed) this.index.moveSaved(replica, restored.entry, null);
      this.index.setSlot(replica, slot, promptBlocks.slice(0, keepBlocks));
    } else {
      this.index.truncateSlot(replica, slot, keepBlocks);
    }
    return saved;
  }

  /** What a llama-server child's prompt cache did as the request took `slot`, as its mirror replays it (a report as an engine's). */
  private mirrorHostCache(
    replica: number,
    slot: number,
    promptBlocks: readonly number[],
    reusedTokens: number,
    { limits, promptTokens }: HostPromptCacheContext,
  ): HostPromptCacheMoves {
    let mirror = this.hostCaches.get(replica);
    if (!mirror) this.hostCaches.set(replica, (mirror = new HostPromptCacheMirror(limits)));
    return mirror.served(slot, this.index.slotBlocks(replica, slot), promptBlocks, promptTokens, reusedTokens);
  }

  /** What the slot holds after the request (its blocks are returned), and the conversation's replica. */
  noteDone(
    replica: number,
    prompt: readonly number[],
    promptBlocks: readonly number[],
    done: GenerateDone,
    conversationId: string | undefined,
  ): readonly number[] {
    const held = [...prompt, ...done.completionTokens].slice(0, done.heldTokens);
    const heldBlocks = held.length >= prompt.length ? blockHashes(held) : promptBlocks.slice(0, Math.floor(held.length / BLOCK_TOKENS));
    if (done.slot !== null) {
      this.index.setSlot(replica, done.slot, heldBlocks);
      let slots = this.slotConversations.get(replica);
      if (!slots) this.slotConversations.set(replica, (slots = new Map()));
      slots.set(done.slot, conversationId ?? null);
    } else if (done.heldTokens > 0) {
      // A peer that names no slot: what it was sent is what it likely holds.
      this.estimated.noteServed(replica, heldBlocks);
    }
    if (conversationId !== undefined) {
      this.conversationReplica.delete(conversationId);
      this.conversationReplica.set(conversationId, replica);
      if (this.conversationReplica.size > CONVERSATIONS_REMEMBERED) this.conversationReplica.delete(this.conversationReplica.keys().next().value!);
    }
    return heldBlocks;
  }

  /** A llama-server child saved a slot to a lent slot file (its disk-tier entry), dropping the files that save removed. */
  noteShelved(replica: number, shelved: ShelvedSlot, conversationId: string | undefined): void {
    for (const entry of shelved.dropped) this.index.moveSaved(replica, entry, null);
    this.index.saveBlocks(replica, shelved.entry, 'disk', shelved.blocks, {
      tokens: shelved.tokens,
      bytes: shelved.bytes,
      conversationId: conversationId ?? null,
    });
  }

  forgetReplica(replica: number): void {
    this.combined.forgetReplica(replica);
    this.slotConversations.delete(replica);
    this.hostCaches.delete(replica);
  }

  /** The replica's prefix-cache entries in `tier` as the exact index mirrors them (for the dashboard). */
  savedEntries(replica: number, tier: PrefixTier): SavedEntryView[] {
    return this.index.savedEntries(replica, tier);
  }

  /** A rebuild moved (or dropped) the replica's slot prefixes. */
  remap(replica: number, prefixes: PrefixReport): void {
    const moves = prefixes.slots.flatMap((p) => (p.to === null ? [] : [{ from: p.from, to: p.to, keepBlocks: Math.floor(p.tokens / BLOCK_TOKENS) }]));
    this.index.remapSlots(replica, moves);
    // A llama-server child restarted for the rebuild: its prompt cache is empty.
    this.hostCaches.delete(replica);
    const conversations = this.slotConversations.get(replica);
    this.slotConversations.set(replica, new Map(moves.map((m) => [m.to, conversations?.get(m.from) ?? null])));
  }

  /** Prompt tokens (these block hashes) the index says slot `slot` of `replica` holds, in whole blocks. */
  heldInSlot(replica: number, slot: number, blocks: readonly number[]): number {
    return sharedBlocks(this.index.slotBlocks(replica, slot), blocks) * BLOCK_TOKENS;
  }

  /** Prompt tokens of `tokens` the index says `replica` holds, in whole blocks (what the router sees). */
  heldPrefixTokens(replica: number, tokens: readonly number[]): number {
    return this.cachedTokens(replica, blockHashes(tokens));
  }

  /** The same for a prompt already cut into block hashes. */
  cachedTokens(replica: number, blocks: readonly number[]): number {
    return this.combined.matchedBlocks(replica, blocks) * BLOCK_TOKENS;
  }

  /** Prompt tokens the replica would not prefill: held in a slot or saved in its engine's prefix cache. */
  reusableTokens(replica: number, blocks: readonly number[]): number {
    return reusableBlocks(this.combined, replica, blocks) * BLOCK_TOKENS;
  }
}

/** One index over the exact and the estimated forms: a replica holds the longer of its two matches. */
function combine(exact: ExactPrefixIndex, estimated: EstimatedPrefixIndex): PrefixIndex {
  return {
    matchedBlocks: (replica, blocks) => Math.max(exact.matchedBlocks(replica, blocks), estimated.matchedBlocks(replica, blocks)),
    matchedSaved: (replica, blocks, tiers) => exact.matchedSaved(replica, blocks, tiers),
    forgetReplica: (replica) => {
      exact.forgetReplica(replica);
      estimated.forgetReplica(replica);
    },
    get size() {
      return exact.size + estimated.size;
    },
  };
}
