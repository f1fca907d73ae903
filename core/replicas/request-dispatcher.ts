/**
 * A generation's way from arrival to an engine: it waits in the core-held queue (`queue/request-queue.ts`),
 * the dispatch plan (`router/dispatch-plan.ts`) binds it to a replica when one has a free slot — so a healed
 * or newly free replica takes queued work at once —, it runs there with the prefix index following the
 * engine's events, and when its engine dies before the first token it re-enters the queue at its old
 * place (failover). After a token, the death is the client's error (ReplicaDiedError). Engines are never
 * sent more requests than they have slots. On a llama-server child that lends slot files to another (the
 * slot files of llama-server/slot-file-shelf.ts), core picks each request's slot (slot-pin.ts), restores a
 * borrowed file there first, and saves the slot after the reply.
 */
import type { GenerateDone, GenerateRequestInput } from '../../common/engine-protocol.js';
import type { PrefixBorrow } from '../../common/prefix-cache.js';
import { EngineExitedError, type TokenChunk } from '../engine/engine-client.js';
import { planDispatch } from '../router/dispatch-plan.js';
import { RequestQueue, type QueueSettings, type Waiting } from '../queue/request-queue.js';
import { blockHashes } from '../router/block-hash.js';
import type { RouteDecision } from '../router/router.js';
import type { LogSink } from '../logging/core-log.js';
import type { DispatchObserver } from '../metrics/request-metrics.js';
import type { Replica } from './replica.js';
import { NoReplicaError, ReplicaDiedError } from './replica-errors.js';
import { needsOf, noReplicaTakes, takes, type Need } from './request-needs.js';
import type { RoutingState } from './routing-state.js';
import { slotToPin } from './slot-pin.js';

export interface ReplicaGenerateResult extends GenerateDone {
  replica: number;
  /** The slot numbered across all replicas, as in the global slot view. */
  globalSlot: number | null;
  /** Replicas that died under this request before its first token and were routed around. */
  failedOver: number[];
}

export interface ReplicaGenerateOptions {
  onTokens?: (chunk: TokenChunk & { replica: number }) => void;
  /**
   * Called once, when the request has first been handed to a replica's engine client (a stream's headers
   * go then, while a local engine works on it, not on the way to it; a peer's client may still be
   * connecting).
   */
  onDispatched?: (replica: number) => void;
  signal?: AbortSignal;
}

interface QueuedGeneration {
  readonly request: GenerateRequestInput;
  readonly blocks: readonly number[];
  /** What the serving replica must take (request-needs.ts). */
  readonly needs: readonly Need[];
  /** Replicas that failed this request, with the incarnation they had then (a remote may still look ready). */
  readonly failedOn: ReadonlyMap<number, number>;
}

/** Whether `replica` takes a request with these needs (one without a client yet may: it is judged when it has one). */
const takesNeeds = (replica: Replica, needs: readonly Need[]): boolean => replica.driver.client === undefined || takes(replica.driver.client, needs);

/** A request whose engines keep dying before its first token is refused after this many failovers. */
const MAX_FAILOVERS = 3;

export interface DispatcherOptions {
  replicas: readonly Replica[];
  routing: RoutingState;
  queue: QueueSettings;
  log: LogSink;
  /** The global number of a replica's first slot. */
  slotOffset: (replica: number) => number;
  /** Told each binding's queue wait and routing time (`/metrics`). */
  observer?: DispatchObserver;
}

export class RequestDispatcher {
  readonly queue: RequestQueue<QueuedGeneration, Replica>;
  private holdTimer: NodeJS.Timeout | undefined;
  private dispatchQueued = false;
  /**
   * What each request just bound takes to its replica: the tokens it will prefill (added to the replica's
   * pending prefill until its first token) and, when it restores another replica's saved entry, the hint.
   */
  private readonly bound = new Map<number, { prefillTokens: number; borrow: PrefixBorrow | undefined }>();

  constructor(private readonly options: DispatcherOptions) {
    this.queue = new RequestQueue(options.queue, () => this.dispatchSoon());
  }

  /** Queues, dispatches and runs one generation; retried from the queue if its engine dies before the first token. */
  async generate(request: GenerateRequestInput, options: ReplicaGenerateOptions = {}): Promise<ReplicaGenerateResult> {
    const blocks = blockHashes(request.tokens);
    const needs = needsOf(request);
    const failedOver: number[] = [];
    const failedOn = new Map<number, number>();
    const seq = this.queue.takeSeq();
    let queuedMs = 0;
    let dispatched = false;
    const dispatchedOnce = (replica: number): void => {
      if (dispatched) return;
      dispatched = true;
      options.onDispatched?.(replica);
    };
    for (;;) {
      const reentering = failedOver.length > 0;
      const refusal = this.refusal(reentering, failedOn, needs);
      if (refusal) throw new NoReplicaError(refusal);
      const waitStarted = performance.now();
      const replica = await this.queue.wait(seq, { request, blocks, needs, failedOn }, { signal: options.signal, reentering });
      queuedMs += performance.now() - waitStarted;
      const { prefillTokens, borrow } = this.bound.get(seq) ?? { prefillTokens: 0, borrow: undefined };
      this.bound.delete(seq);
      try {
        const done = await this.runOn(
          replica,
          borrow ? { ...request, borrow } : request,
          blocks,
          prefillTokens,
          { ...options, onDispatched: dispatchedOnce },
          replica.pinnedSlots.get(seq),
        );
        return { ...done, timings: { ...done.timings, queuedMs: done.timings.queuedMs + queuedMs }, failedOver };
      } catch (error) {
        if (!(error instanceof EngineExitedError) || options.signal?.aborted) throw error;
        failedOver.push(replica.index);
        failedOn.set(replica.index, replica.incarnation);
        if (failedOver.length > MAX_FAILOVERS)
          throw new NoReplicaError(`replicas ${failedOver.join(', ')} died before answering; the request was not retried again`);
        this.options.log(`[replica ${replica.index}] died before the first token; the request goes back to its place in the queue`, 'warn');
      } finally {
        replica.running--;
        const slot = replica.pinnedSlots.get(seq);
        if (slot !== undefined) {
          replica.pinnedSlots.delete(seq);
          replica.slotLastUsed.set(slot, performance.now());
        }
        this.dispatchSoon();
      }
    }
  }

  /**
   * Why a request cannot wait for a replica, or null when it can: a new one needs a replica that is
   * ready or in maintenance (which comes back by itself); one that failed over may also wait for a
   * replica being healed or started. A replica that failed this request and is still ready in the same
   * incarnation (a llama-server that missed the first-token bound but stays up) will never take it:
   * waiting for it only strands the request. With `needs`, the replica must also take them.
   */
  private refusal(reentering: boolean, failedOn: ReadonlyMap<number, number>, needs: readonly Need[]): string | null {
    const living = reentering ? ['ready', 'maintenance', 'healing', 'starting'] : ['ready', 'maintenance'];
    const candidates = this.options.replicas.filter((r) => living.includes(r.state) && (r.state !== 'ready' || failedOn.get(r.index) !== r.incarnation));
    if (candidates.length === 0) {
      return failedOn.size > 0
        ? `replicas ${[...failedOn.keys()].join(', ')} died before answering and no other replica can take the request`
        : 'no replica is alive to serve the request';
    }
    return candidates.some((r) => takesNeeds(r, needs)) ? null : noReplicaTakes(needs);
  }

  /** A replica changed state: look for work for it, and refuse the waiting requests that no replica can ever serve. */
  replicaStateChanged(): void {
    for (const waiting of [...this.queue.waiting()]) {
      const refusal = this.refusal(true, waiting.payload.failedOn, waiting.payload.needs);
      if (refusal) this.queue.refuse(waiting, new NoReplicaError(refusal));
    }
    this.dispatchSoon();
  }

  /** Seconds a refused client should wait: the queue's length over the slots, at the mean service time. */
  retryAfterSeconds(): number {
    const routable = this.options.replicas.filter((r) => r.routable);
    const slots = routable.reduce((sum, r) => sum + r.slots, 0);
    if (slots === 0) return 5;
    const serviceMs = routable.reduce((sum, r) => sum + (r.serviceMs ?? 5000), 0) / routable.length;
    return Math.min(60, Math.max(1, Math.ceil(((this.queue.size + 1) * serviceMs) / slots / 1000)));
  }

  /** Coalesces the reasons to dispatch within one turn of the event loop into one pass. */
  private dispatchSoon(): void {
    if (this.dispatchQueued) return;
    this.dispatchQueued = true;
    queueMicrotask(() => {
      this.dispatchQueued = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    clearTimeout(this.holdTimer);
    const routable = this.options.replicas.filter((r) => r.routable);
    if (routable.length === 0 || this.queue.size === 0) return;
    const now = performance.now();
    const bySeq = new Map<number, Waiting<QueuedGeneration>>(this.queue.waiting().map((w) => [w.seq, w]));
    const { routing } = this.options;
    const routeMs = new Map<number, number>();
    const plan = planDispatch({
      waiting: [...bySeq.values()].map((w) => ({ seq: w.seq, conversationId: w.payload.request.conversationId, waitedMs: now - w.enqueuedAt, waiting: w })),
      replicas: routable.map((r) => ({ ...r.candidate(), borrowFrom: this.lenders(r) })),
      choose: (pending, candidates) => {
        const started = performance.now();
        const decision = routing.choose(pending.waiting.payload.blocks, pending.waiting.payload.request.tokens.length, candidates);
        routeMs.set(pending.seq, performance.now() - started);
        return decision;
      },
      reusableTokens: (pending, replica) => routing.reusableTokens(replica, pending.waiting.payload.blocks),
      allowed: (pending, replica) => {
        const { failedOn, needs } = pending.waiting.payload;
        const candidate = this.options.replicas[replica]!;
        return failedOn.get(replica) !== candidate.incarnation && takesNeeds(candidate, needs);
      },
      lastReplicaOf: (id) => routing.lastReplicaOf(id),
      cacheHoldMs: this.queue.limits.cacheHoldMs,
    });
    for (const { seq, decision } of plan.bindings) {
      const replica = this.options.replicas[decision.replica]!;
      replica.running++;
      replica.pendingPrefillTokens += decision.prefillTokens;
      this.bound.set(seq, { prefillTokens: decision.prefillTokens, borrow: this.borrowHint(decision) });
      const waiting = bySeq.get(seq)!;
      if (replica.pinsSlots) this.pinSlot(replica, seq, waiting.payload);
      routing.noteRouted(replica.index);
      this.options.observer?.bound(replica.index, { queuedMs: now - waiting.enqueuedAt, routeMs: routeMs.get(seq)! });
      this.queue.bind(waiting, replica);
    }
    if (plan.nextHoldEndsInMs !== null) this.holdTimer = setTimeout(() => this.dispatch(), Math.ceil(plan.nextHoldEndsInMs) + 1).unref();
  }

  /** Picks the free slot the request bound to `replica` runs in (slot-pin.ts), where core picks them. */
  private pinSlot(replica: Replica, seq: number, { blocks, request }: QueuedGeneration): void {
    const taken = new Set(replica.pinnedSlots.values());
    const free = Array.from({ length: replica.slots }, (_, slot) => slot)
      .filter((slot) => !taken.has(slot))
      .map((slot) => ({ slot, sharedTokens: this.options.routing.heldInSlot(replica.index, slot, blocks), lastUsed: replica.slotLastUsed.get(slot) }));
    const slot = slotToPin(free, request.tokens.length);
    if (slot !== null) replica.pinnedSlots.set(seq, slot);
  }

  /** The replicas whose saved entries `replica`'s engine can restore (the same borrow key, any state). */
  private lenders(replica: Replica): number[] {
    const key = replica.borrowKey;
    return key === null ? [] : this.options.replicas.filter((r) => r !== replica && r.borrowKey === key).map((r) => r.index);
  }

  /**
   * The hint naming the entry to restore and its owner's tier folders, when the decision borrows, or restores
   * one of a llama-server child's own slot files (it restores those only when told; a node-llama-cpp engine
   * restores its own entries unasked, and a llama-server child its own prompt cache's); else undefined.
   */
  private borrowHint(decision: RouteDecision): PrefixBorrow | undefined {
    const restore = decision.restore;
    if (!restore) return undefined;
    const ownSlotFile = restore.tier === 'disk' && this.options.replicas[decision.replica]?.slotFiles;
    const owner = restore.borrow?.replica ?? (ownSlotFile ? decision.replica : undefined);
    const dirs = owner === undefined ? undefined : this.options.replicas[owner]?.info?.prefixCacheShare?.dirs;
    return dirs ? { entry: restore.entry, tier: restore.tier, dirs } : undefined;
  }

  /**
   * After a reply on a llama-server child that lends slot files to another replica: saves the slot, sent as the
   * reply ends so that the child runs it before a request pinned to the slot later; the index hears of the file
   * as the replica's disk-tier entry (and of those the save dropped).
   */
  private lend(replica: Replica, done: GenerateDone, heldBlocks: readonly number[], conversationId: string | undefined): void {
    const shelf = replica.slotFiles;
    if (!shelf || done.slot === null || done.finishReason === 'cancelled' || this.lenders(replica).length === 0) return;
    const { incarnation } = replica;
    void shelf.save(done.slot, heldBlocks, done.heldTokens).then(
      (shelved) => {
        if (shelved && replica.incarnation === incarnation) this.options.routing.noteShelved(replica.index, shelved, conversationId);
      },
      () => {},
    );
  }

  /**
   * Runs the request on its bound replica, in `slot` where core picks it; its `prefillTokens` count as the
   * replica's pending prefill until the first token. `onDispatched` is called once its client has it.
   */
  private async runOn(
    replica: Replica,
    request: GenerateRequestInput,
    blocks: readonly number[],
    prefillTokens: number,
    options: ReplicaGenerateOptions,
    slot: number | undefined,
  ) {
    let pendingPrefill = prefillTokens;
    const prefillOver = (): void => {
      replica.pendingPrefillTokens -= pendingPrefill;
      pendingPrefill = 0;
    };
    const client = replica.driver.client;
    if (!client) {
      prefillOver();
      throw new EngineExitedError({ code: null, signal: null });
    }
    const { routing } = this.options;
    // What the client has been sent: a peer that gives no token ids still sends text, one chunk a token.
    let tokensSent = 0;
    const handle = client.generate(
      request,
      (chunk) => {
        if (chunk.tokens.length || chunk.text) {
          tokensSent += Math.max(1, chunk.tokens.length);
          prefillOver();
        }
        options.onTokens?.({ ...chunk, replica: replica.index });
      },
      slot,
    );
    const abort = (): void => void handle.cancel().catch(() => {});
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) abort();
    void handle.started.then(
      (s) => {
        const hostCache = replica.driver.promptCache ?? null;
        const saved = routing.noteStarted(replica.index, s, blocks, hostCache && { limits: hostCache, promptTokens: request.tokens.length });
        replica.noteStarted(s);
        // The engine saved the conversation it evicted: a request held for it may now borrow it elsewhere.
        if (saved) this.dispatchSoon();
      },
      () => {},
    );
    try {
      options.onDispatched?.(replica.index);
      const done = await handle.done;
      const heldBlocks = routing.noteDone(replica.index, request.tokens, blocks, done, request.conversationId);
      replica.noteDone(done);
      this.lend(replica, done, heldBlocks, request.conversationId);
      return { ...done, replica: replica.index, globalSlot: done.slot === null ? null : this.options.slotOffset(replica.index) + done.slot };
    } catch (error) {
      if (error instanceof EngineExitedError && tokensSent > 0) throw new ReplicaDiedError(replica.index, tokensSent);
      throw error;
    } finally {
      prefillOver();
      options.signal?.removeEventListener('abort', abort);
    }
  }
}
