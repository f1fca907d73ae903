/**
 * The discrete-event replay (bench/simulate.ts): requests arrive at fronts; each front holds them in its
 * queue and binds them by Manifold's own dispatch plan (core/router/dispatch-plan.ts: late binding, cache
 * holds) and router (core/router/router.ts with the policy's costs) over its own prefix index
 * (core/router/prefix-index.ts), mirrored from what the SIMULATED engines (simulated-engine.ts) report, as
 * RoutingState mirrors a real engine's replies. Policies that are not Manifold's bind at once, as their
 * routers do: `approximate-tree` (SGLang's cache-aware router: approximate-tree.ts) and the `oracle` (every
 * replica restores from one infinite cache: the hit no router exceeds; least-loaded).
 * Several fronts: a balancer sends each request to one (`random`, or by its session: `affinity`); each front
 * sees only its own requests' reports (`own`), or every engine's (`shared` cache events).
 */
import { BLOCK_TOKENS } from '../../core/router/block-hash.js';
import { ExactPrefixIndex, reusableBlocks } from '../../core/router/prefix-index.js';
import { planDispatch } from '../../core/router/dispatch-plan.js';
import { Router } from '../../core/router/router.js';
import type { RouteCandidate } from '../../core/router/route-policy.js';
import { DEFAULT_QUEUE_SETTINGS } from '../../core/queue/request-queue.js';
import { percentile } from '../stats.js';
import { ApproximateTree } from './approximate-tree.js';
import { SimulatedEngine, type EngineEvents, type PerformanceModel, type SimRun } from './simulated-engine.js';
import { seenStart, type SimRequest } from './workloads.js';

export const SIM_POLICIES = ['prefix', 'round-robin', 'least-loaded', 'approximate-tree', 'oracle'] as const;
export type SimPolicy = (typeof SIM_POLICIES)[number];

export interface SimulationOptions {
  requests: readonly SimRequest[];
  replicas: number;
  model: PerformanceModel;
  policy: SimPolicy;
  /** Arrival times are divided by this (2: twice the rate). */
  speedup: number;
  fronts?: number;
  balancer?: 'random' | 'affinity';
  /** Whether each front hears every engine's cache events, or only its own requests'. */
  events?: 'own' | 'shared';
  /** What-if: engines that copy a shared start between slots (simulated-engine.ts). */
  slotCopy?: boolean;
}

export interface SimulationResult {
  policy: SimPolicy;
  replicas: number;
  requests: number;
  hit: number;
  ttftP50Ms: number;
  ttftP90Ms: number;
  ttftP99Ms: number;
  queueP90Ms: number;
  outputTokensPerSecond: number;
  /** Busiest replica's routed requests over the mean. */
  loadSpread: number;
  /** The router's own time per decision (wall clock of this process), p99. */
  decisionP99Us: number;
  decisionP50Us: number;
  decisions: number;
  indexBlocks: number;
  /**
   * Late binding only: the blocks an infinite cache would have reused (seen in an earlier prompt) that the
   * engine did not reuse, by where they were at binding, as shares of all prompt blocks: on the chosen replica
   * (in a slot busy with another request when it started, or evicted before), on a replica with a free slot
   * (the costs chose otherwise), only on replicas without one, or on none (evicted, or still being prefilled).
   */
  missed: { chosen: number; freeElsewhere: number; busyOnly: number; nowhere: number } | null;
}

interface Front {
  readonly index: ExactPrefixIndex;
  readonly router: Router;
  readonly waiting: { run: SimRun; enqueuedAt: number }[];
  /** Requests it bound per replica and not finished (what it knows of the replicas' load). */
  readonly running: number[];
  readonly pendingPrefill: number[];
  readonly lastReplica: Map<string, number>;
}

/** A min-heap of [time, order, what]: arrivals and the engines' next events. */
class Events {
  private readonly heap: [number, number, () => void][] = [];
  private order = 0;
  push(at: number, what: () => void): void {
    const heap = this.heap;
    heap.push([at, this.order++, what]);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (less(heap[parent]!, heap[i]!)) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }
  pop(): [number, () => void] | undefined {
    const heap = this.heap;
    if (heap.length === 0) return undefined;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    return [top[0], top[2]];
  }
}
const less = (a: [number, number, unknown], b: [number, number, unknown]): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/** FNV-1a of a session, for the balancer's affinity. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function simulate(options: SimulationOptions): SimulationResult {
  const { replicas, model, policy, speedup } = options;
  const frontCount = options.fronts ?? 1;
  const sharedEvents = (options.events ?? 'own') === 'shared';
  const lateBinding = policy !== 'approximate-tree' && policy !== 'oracle';
  const sharedIndex = sharedEvents ? new ExactPrefixIndex() : null;
  const fronts: Front[] = Array.from({ length: frontCount }, () => {
    const index = sharedIndex ?? new ExactPrefixIndex();
    return {
      index,
      router: new Router(index, lateBinding ? policy : 'least-loaded'),
      waiting: [],
      running: new Array<number>(replicas).fill(0),
      pendingPrefill: new Array<number>(replicas).fill(0),
      lastReplica: new Map(),
    };
  });
  const tree = policy === 'approximate-tree' ? new ApproximateTree(replicas) : null;
  const oracleCache = policy === 'oracle' ? new Set<number>() : null;
  const queue = new Events();
  const ttft: number[] = [];
  const queued: number[] = [];
  const decisionUs: number[] = [];
  let cachedTokens = 0;
  let promptTokens = 0;
  let outputTokens = 0;
  let lastDoneAt = 0;
  const seen = new Set<number>();
  const missed = { chosen: 0, freeElsewhere: 0, busyOnly: 0, nowhere: 0 };
  /** Per bound run: of the blocks an infinite cache would reuse, those its replica held at binding (what countMissed leaves for firstToken). */
  const heldAtBinding = new Map<SimRun, number>();
  let boundBlocks = 0;

  const hearing = (front: number): Front[] => (sharedEvents ? [fronts[0]!] : [fronts[front]!]);
  const events: EngineEvents = {
    started(replica, slot, held, _restored, run) {
      for (const f of hearing(run.front)) f.index.setSlot(replica, slot, held);
      queued.push(run.startedAt - run.request.arrivalMs / speedup);
    },
    firstToken(run, at) {
      const replica = runReplica.get(run)!;
      for (const f of hearing(run.front)) f.index.setSlot(replica, run.slot, run.request.blocks);
      fronts[run.front]!.pendingPrefill[replica]! -= run.request.promptTokens - run.cachedTokens;
      ttft.push(at - run.request.arrivalMs / speedup);
      const held = heldAtBinding.get(run);
      if (held !== undefined) missed.chosen += Math.max(0, held - Math.floor(run.cachedTokens / BLOCK_TOKENS));
      heldAtBinding.delete(run);
      cachedTokens += run.cachedTokens;
      promptTokens += run.request.promptTokens;
    },
    done(run, at) {
      const replica = runReplica.get(run)!;
      fronts[run.front]!.running[replica]!--;
      outputTokens += run.request.outputTokens;
      lastDoneAt = Math.max(lastDoneAt, at);
      dispatch(run.front, at);
    },
    saved(replica, entry, tier, blocks, by) {
      for (const f of hearing(by.front)) f.index.saveBlocks(replica, entry, tier, blocks, { tokens: 0, bytes: 0, conversationId: null });
    },
    moved(replica, entry, tier, by) {
      for (const f of hearing(by.front)) f.index.moveSaved(replica, entry, tier);
    },
  };
  const runReplica = new Map<SimRun, number>();
  const engines = Array.from({ length: replicas }, (_, r) => new SimulatedEngine(r, model, events, oracleCache, options.slotCopy ?? false));
  const schedule = (engine: SimulatedEngine): void => {
    const at = engine.nextEventAt;
    if (at === null) return;
    const version = engine.version;
    queue.push(at, () => {
      if (engine.version !== version) return;
      engine.tick(at);
      schedule(engine);
    });
  };

  const bind = (front: Front, run: SimRun, replica: number, now: number, prefill: number): void => {
    front.running[replica]!++;
    front.pendingPrefill[replica]! += prefill;
    if (run.request.session) front.lastReplica.set(run.request.session, replica);
    front.router.noteRouted(replica);
    runReplica.set(run, replica);
    const engine = engines[replica]!;
    engine.submit(run, now);
    schedule(engine);
  };

  /** Manifold's late binding: the front's dispatch plan over the replicas it sees with room. */
  const dispatch = (frontIndex: number, now: number): void => {
    const front = fronts[frontIndex]!;
    if (front.waiting.length === 0) return;
    const byId = new Map(front.waiting.map((w) => [w.run.request.id, w]));
    const candidates: Omit<RouteCandidate, 'servedConversation'>[] = engines.map((e, r) => ({
      replica: r,
      running: front.running[r]!,
      slots: model.slots,
      prefillTokensPerMs: model.chunkTokens / model.stepMs(model.chunkTokens, 0, 0),
      pendingPrefillTokens: Math.max(0, front.pendingPrefill[r]!),
    }));
    const plan = planDispatch({
      waiting: front.waiting.map((w) => ({ seq: w.run.request.id, conversationId: w.run.request.session, waitedMs: now - w.enqueuedAt })),
      replicas: candidates,
      choose: (request, offered) => {
        const started = performance.now();
        const r = byId.get(request.seq)!.run.request;
        const decision = front.router.choose(r.blocks, r.promptTokens, offered);
        decisionUs.push((performance.now() - started) * 1000);
        return decision;
      },
      reusableTokens: (request, replica) => reusableBlocks(front.index, replica, byId.get(request.seq)!.run.request.blocks) * BLOCK_TOKENS,
      lastReplicaOf: (id) => front.lastReplica.get(id),
      allowed: () => true,
      cacheHoldMs: DEFAULT_QUEUE_SETTINGS.cacheHoldMs,
    });
    const bound = new Set<number>();
    for (const { seq, decision } of plan.bindings) {
      const waiting = byId.get(seq)!;
      bound.add(seq);
      countMissed(front, waiting.run, Math.floor((waiting.run.request.promptTokens - decision.prefillTokens) / BLOCK_TOKENS));
      bind(front, waiting.run, decision.replica, now, decision.prefillTokens);
    }
    if (bound.size > 0) front.waiting.splice(0, front.waiting.length, ...front.waiting.filter((w) => !bound.has(w.run.request.id)));
    if (plan.nextHoldEndsInMs !== null) queue.push(now + plan.nextHoldEndsInMs + 1e-6, () => dispatch(frontIndex, now + plan.nextHoldEndsInMs! + 1e-6));
  };

  /** Where the blocks an infinite cache would reuse of a request were, beyond the `reused` its replica holds (the rest at its first token). */
  const countMissed = (front: Front, run: SimRun, reused: number): void => {
    const request = run.request;
    const eligible = seenStart(seen, request.blocks);
    let free = 0;
    let anywhere = 0;
    for (let r = 0; r < replicas; r++) {
      const held = Math.min(eligible, reusableBlocks(front.index, r, request.blocks));
      anywhere = Math.max(anywhere, held);
      if (front.running[r]! < model.slots) free = Math.max(free, held);
    }
    reused = Math.min(reused, eligible);
    heldAtBinding.set(run, reused);
    missed.freeElsewhere += Math.max(0, free - reused);
    missed.busyOnly += Math.max(0, anywhere - Math.max(free, reused));
    missed.nowhere += eligible - Math.max(anywhere, reused);
    boundBlocks += request.blocks.length;
    for (const block of request.blocks) seen.add(block);
  };

  /** The policies that bind at arrival (their engines queue what finds no free slot). */
  const bindAtOnce = (frontIndex: number, run: SimRun, now: number): void => {
    const front = fronts[frontIndex]!;
    const started = performance.now();
    const load = engines.map((e) => e.runningCount + e.waiting.length);
    const replica = tree ? tree.choose(run.request.blocks, load) : load.indexOf(Math.min(...load));
    decisionUs.push((performance.now() - started) * 1000);
    tree?.note(replica, run.request.blocks);
    bind(front, run, replica, now, 0);
  };

  const sorted = [...options.requests].sort((a, b) => a.arrivalMs - b.arrivalMs);
  for (const request of sorted) {
    const at = request.arrivalMs / speedup;
    queue.push(at, () => {
      const frontIndex = frontCount === 1 ? 0 : options.balancer === 'affinity' ? hashOf(request.session) % frontCount : hashOf(`r${request.id}`) % frontCount;
      const run: SimRun = {
        request,
        front: frontIndex,
        slot: -1,
        startedAt: at,
        cachedTokens: 0,
        prefillLeft: 0,
        restoreMsLeft: 0,
        decodeLeft: 0,
        firstTokenAt: null,
      };
      if (lateBinding) {
        fronts[frontIndex]!.waiting.push({ run, enqueuedAt: at });
        dispatch(frontIndex, at);
      } else bindAtOnce(frontIndex, run, at);
    });
  }
  for (let next = queue.pop(); next; next = queue.pop()) next[1]();

  const routed = engines.map((e) => e.routed);
  const mean = routed.reduce((s, v) => s + v, 0) / replicas;
  const firstArrival = sorted[0]!.arrivalMs / speedup;
  return {
    policy,
    replicas,
    requests: sorted.length,
    hit: promptTokens ? cachedTokens / promptTokens : 0,
    ttftP50Ms: percentile(ttft, 50),
    ttftP90Ms: percentile(ttft, 90),
    ttftP99Ms: percentile(ttft, 99),
    queueP90Ms: percentile(queued, 90),
    outputTokensPerSecond: (outputTokens / (lastDoneAt - firstArrival)) * 1000,
    loadSpread: Math.max(...routed) / mean,
    decisionP99Us: percentile(decisionUs, 99),
    decisionP50Us: percentile(decisionUs, 50),
    decisions: decisionUs.length,
    indexBlocks: fronts[0]!.index.size,
    missed: lateBinding
      ? {
          chosen: missed.chosen / boundBlocks,
          freeElsewhere: missed.freeElsewhere / boundBlocks,
          busyOnly: missed.busyOnly / boundBlocks,
          nowhere: missed.nowhere / boundBlocks,
        }
      : null,
  };
}
