/**
 * One replica as the set sees it: its plan, its driver (kind/replica-driver.ts: whatever its engine kind),
 * its state, what it runs now (requests bound
 * to it by the dispatcher), its counters for the views, the history the heal policy reads, and the rates
 * measured from its requests that the router's cost uses (prefill, service time, prefix-cache restores).
 */
import type { GenerateDone, ReadyInfo, ReEvaluation } from '../../common/engine-protocol.js';
import type { PrefixTier } from '../../common/prefix-cache.js';
import type { StartedInfo } from '../engine/engine-client.js';
import type { ReplicaPlan } from '../config/run-config.js';
import type { RouteCandidate } from '../router/router.js';
import type { ReplicaDriver, SlotFileLender } from '../kind/replica-driver.js';

export type ReplicaState = 'starting' | 'ready' | 'maintenance' | 'latched' | 'healing' | 'failed' | 'stopped';

/** Weight of the newest sample in the measured rates. */
const EWMA = 0.3;
/** Prefills shorter than this say little about a replica's rate. */
const MIN_RATE_SAMPLE_TOKENS = 256;

export class Replica {
  state: ReplicaState = 'starting';
  /** Why a latched replica takes no requests (its failed rebuild's reasons). */
  latchReason: string | null = null;
  info: ReadyInfo | null = null;
  /** Its engine evaluating a live resize's kept prefixes again (re-evaluation-watch.ts); null when not. */
  reEvaluation: ReEvaluation | null = null;
  /** The logical CPUs its engine is pinned to; empty when not pinned. */
  cpus: number[] = [];
  /** Requests bound to it and not finished (never more than its slots). */
  running = 0;
  /** Embedding requests running on it (outside its slots, on the engine's embedding context). */
  embedding = 0;
  /** Prompt tokens of its running requests that were not cached when bound and have no first token yet. */
  pendingPrefillTokens = 0;
  /** How many times it became ready: a request it failed may go back to it only after it comes back anew. */
  incarnation = 0;
  cacheHitTokens = 0;
  promptTokens = 0;
  completionTokens = 0;
  consecutiveFailures = 0;
  lastStartAt = 0;
  lastReadyAt = 0;
  healTimer: NodeJS.Timeout | undefined;
  prefillTokensPerMs: number | null = null;
  serviceMs: number | null = null;
  /** Measured ms per token of restoring a saved prefix from each tier of its engine's prefix cache. */
  restoreMsPerToken: Partial<Record<PrefixTier, number>> = {};
  /** Where core picks each request's slot (pinsSlots): the slot of each request bound to it, by queue seq, until it ends. */
  readonly pinnedSlots = new Map<number, number>();
  /** When each slot last finished a request, as llama-server's own least-recently-used choice counts (pinsSlots). */
  readonly slotLastUsed = new Map<number, number>();

  constructor(
    readonly plan: ReplicaPlan,
    readonly driver: ReplicaDriver,
  ) {}

  get index(): number {
    return this.plan.index;
  }

  /** Slots for the aggregates: what it loaded (or its peer said), else what it was asked for; a replica without slots counts one. */
  get slots(): number {
    return this.info?.sizes.slots ?? this.plan.remote?.slots ?? this.plan.engine.slots ?? 1;
  }

  get routable(): boolean {
    return this.state === 'ready' && this.driver.client !== undefined;
  }

  /**
   * Which replicas' prefix-cache entries its engine can restore: those with the same key, the state layout
   * its child reports (a node-llama-cpp engine child on this machine with its cache on, or a llama-server
   * child that lends slot files; the kind, the same model file and context layout — llama.cpp refuses, or
   * worse, a state of another); null: it never borrows (remote peers, caches off).
   */
  get borrowKey(): string | null {
    return (this.driver.local && this.info?.prefixCacheShare?.layout) || null;
  }

  /** The slot files its child lends to its peers (a llama-server child's); null when it lends none. */
  get slotFiles(): SlotFileLender | null {
    return this.driver.slotFiles ?? null;
  }

  /**
   * Whether core picks the slot of each request it sends (a llama-server child that lends slot files,
   * replicas/slot-pin.ts): a file is restored into the slot the request then runs in, and no request of
   * llama-server's choosing takes that slot between the two.
   */
  get pinsSlots(): boolean {
    return this.slotFiles !== null;
  }

  /** What the router weighs for it now (the conversation flag is the dispatcher's). */
  candidate(): Omit<RouteCandidate, 'servedConversation'> {
    return {
      replica: this.index,
      running: this.running,
      slots: this.slots,
      prefillTokensPerMs: this.prefillTokensPerMs,
      pendingPrefillTokens: this.pendingPrefillTokens,
      restoreMsPerToken: this.restoreMsPerToken,
      ...(this.driver.borrowTiers ? { borrowTiers: this.driver.borrowTiers } : {}),
    };
  }

  /** A request started; when its slot was restored from the prefix cache, that restore's rate is a sample. */
  noteStarted(started: StartedInfo): void {
    const restored = started.prefixCache?.restored;
    if (!restored || restored.tokens === 0) return;
    const old = this.restoreMsPerToken[restored.tier];
    const sample = restored.ms / restored.tokens;
    this.restoreMsPerToken[restored.tier] = old === undefined ? sample : old + EWMA * (sample - old);
  }

  noteDone(done: GenerateDone): void {
    this.cacheHitTokens += done.reusedTokens;
    this.promptTokens += done.usage.promptTokens;
    this.completionTokens += done.usage.completionTokens;
    const { prefillMs, decodeMs, prefillTokens } = done.timings;
    const mix = (old: number | null, sample: number): number => (old === null ? sample : old + EWMA * (sample - old));
    if (prefillTokens >= MIN_RATE_SAMPLE_TOKENS && prefillMs > 0) this.prefillTokensPerMs = mix(this.prefillTokensPerMs, prefillTokens / prefillMs);
    this.serviceMs = mix(this.serviceMs, prefillMs + decodeMs);
  }
}
