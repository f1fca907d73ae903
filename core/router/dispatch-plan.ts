/**
 * Dispatch, the late binding of waiting requests to replicas (pure: the replica set applies the plan).
 * It runs whenever a slot may have freed, a request arrived or an engine saved a conversation it evicted. Requests are taken oldest first; each is
 * costed by the router against the replicas with a free slot, with the running counts and pending prefill of
 * the bindings made so far in this pass, and bound to the cheapest. Cache-aware dispatch, as SGLang's scheduler and Dynamo's
 * KV router do: when a replica without a free slot holds more of the request's prefix than the chosen one
 * — in a slot or saved in its engine's prefix cache, which it restores in milliseconds — (or served its
 * conversation last, when the chosen one holds nothing), the request waits for it rather than evicting
 * another conversation elsewhere — but only as long as the prefill it saves would take, at most
 * `cacheHoldMs` (`holdFor`), and meanwhile younger requests may take the free slots. Nothing is bound when no replica has a free slot.
 */
import type { RouteCandidate, RouteDecision } from './route-policy.js';

export interface DispatchRequest {
  readonly seq: number;
  readonly conversationId: string | undefined;
  /** How long it has waited this time. */
  readonly waitedMs: number;
}

export interface Binding {
  readonly seq: number;
  readonly decision: RouteDecision;
}

export interface DispatchPlan {
  readonly bindings: Binding[];
  /** In how many ms the first held request's hold ends (look again then); null when none is held. */
  readonly nextHoldEndsInMs: number | null;
}

export interface DispatchInputs<R extends DispatchRequest> {
  /** Waiting requests, oldest first. */
  readonly waiting: readonly R[];
  /** Replicas that can take requests now, with what they run (conversation flags are set per request). */
  readonly replicas: readonly Omit<RouteCandidate, 'servedConversation'>[];
  /** The router's choice among candidates (no counting). */
  readonly choose: (request: R, candidates: readonly RouteCandidate[]) => RouteDecision | null;
  /** Prompt tokens of the request that a replica would not prefill: held in a slot or saved in its prefix cache (the index). */
  readonly reusableTokens: (request: R, replica: number) => number;
  /** The replica that last served a conversation. */
  readonly lastReplicaOf: (conversationId: string) => number | undefined;
  /** Whether the request may go to the replica (not to one that just failed it and has not restarted since). */
  readonly allowed: (request: R, replica: number) => boolean;
  readonly cacheHoldMs: number;
}

export function planDispatch<R extends DispatchRequest>(inputs: DispatchInputs<R>): DispatchPlan {
  const running = new Map(inputs.replicas.map((r) => [r.replica, r.running]));
  const pendingPrefill = new Map(inputs.replicas.map((r) => [r.replica, r.pendingPrefillTokens]));
  const hasRoom = (r: { replica: number; slots: number }): boolean => running.get(r.replica)! < Math.max(1, r.slots);
  const bindings: Binding[] = [];
  let nextHoldEndsInMs: number | null = null;
  for (const request of inputs.waiting) {
    if (!inputs.replicas.some(hasRoom)) break;
    const home = request.conversationId === undefined ? undefined : inputs.lastReplicaOf(request.conversationId);
    const candidates = inputs.replicas.filter((r) => inputs.allowed(request, r.replica)).map((r) => candidate(r, running, pendingPrefill, home));
    const decision = inputs.choose(request, candidates.filter(hasRoom));
    if (!decision) continue;
    const holdMs =
      decision.costKind === 'policy' ? 0 : Math.max(0, ...candidates.filter((c) => !hasRoom(c)).map((c) => holdFor(inputs, request, home, decision, c)));
    if (request.waitedMs < holdMs) {
      const endsIn = holdMs - request.waitedMs;
      nextHoldEndsInMs = nextHoldEndsInMs === null ? endsIn : Math.min(nextHoldEndsInMs, endsIn);
      continue;
    }
    running.set(decision.replica, running.get(decision.replica)! + 1);
    pendingPrefill.set(decision.replica, pendingPrefill.get(decision.replica)! + decision.prefillTokens);
    bindings.push({ seq: request.seq, decision });
  }
  return { bindings, nextHoldEndsInMs };
}

/**
 * A replica as the router sees it for one request: every field written out, so all candidates share one
 * shape (objects made by spreading one and overriding its fields made each route decision several times slower).
 */
function candidate(
  r: Omit<RouteCandidate, 'servedConversation'>,
  running: ReadonlyMap<number, number>,
  pendingPrefill: ReadonlyMap<number, number>,
  home: number | undefined,
): RouteCandidate {
  return {
    replica: r.replica,
    running: running.get(r.replica)!,
    slots: r.slots,
    prefillTokensPerMs: r.prefillTokensPerMs,
    pendingPrefillTokens: pendingPrefill.get(r.replica)!,
    servedConversation: home === r.replica,
    restoreMsPerToken: r.restoreMsPerToken,
    borrowFrom: r.borrowFrom,
    borrowTiers: r.borrowTiers,
  };
}

/**
 * How long `request` may wait for the full replica `busy` instead of taking `decision`'s free slot: as
 * long as prefilling elsewhere what `busy` holds beyond the free replica would take, at that replica's
 * measured rate (waiting longer than the work it saves loses; waiting that long and then going is at worst
 * twice the time to first token of going at once), at most `cacheHoldMs`. Before rates are measured, or
 * for a conversation the busy replica served whose prompt no index block holds, `cacheHoldMs`. 0: no hold.
 */
function holdFor<R extends DispatchRequest>(
  inputs: DispatchInputs<R>,
  request: R,
  home: number | undefined,
  decision: RouteDecision,
  busy: RouteCandidate,
): number {
  const reused = decision.restore?.tokens ?? decision.cachedTokens;
  const gain = inputs.reusableTokens(request, busy.replica) - reused;
  if (decision.costKind === 'measured') {
    const rate = inputs.replicas.find((r) => r.replica === decision.replica)!.prefillTokensPerMs!;
    return gain > 0 ? Math.min(inputs.cacheHoldMs, gain / rate) : 0;
  }
  return gain > 0 || (busy.servedConversation && reused === 0 && home !== decision.replica) ? inputs.cacheHoldMs : 0;
}
