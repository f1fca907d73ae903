/**
 * What each request adds to `/metrics`, in one prom-client registry per workstation: when the dispatcher
 * binds a request to a replica, its queue wait and the router's decision time (and one more routed
 * request); when a replica has served it, its time to first token and time per output token (from the
 * request entering the queue, as core saw the tokens arrive) and its tokens and seconds under
 * llama-server's names (`prompt_tokens_total` counts the prompt tokens processed, cached ones apart in
 * `prompt_tokens_cached_total`, as llama-server counts them). Every series is labelled by replica.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import type { GenerateDone } from '../../common/engine-protocol.js';

/** What the metrics read of a served request's result. */
export type ServedRequest = Pick<GenerateDone, 'usage' | 'reusedTokens' | 'timings'> & { replica: number };

/** The dispatcher's report of one binding (a request that failed over is bound once per replica it went to). */
export interface DispatchObserver {
  bound(replica: number, waits: { queuedMs: number; routeMs: number }): void;
}

/** Upper bounds of the queue-wait histogram, in seconds. */
const QUEUE_WAIT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** vLLM's time-to-first-token bounds, up to the queue's longest waits. */
const TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 320];
/** vLLM's time-per-output-token bounds, from a fast GPU's decode to a slow CPU's. */
const TPOT_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];
/** A routing decision is microseconds on a short prompt; the prefix index's walk grows with the prompt. */
const ROUTE_BUCKETS_S = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1];

/** What one served request adds, from its result and when core saw it start, produce its first token and end. */
export interface ServedObservation {
  replica: number;
  /** Null when it produced no token. */
  timeToFirstTokenS: number | null;
  /** The mean gap between its tokens after the first; null with fewer than two tokens. */
  timePerOutputTokenS: number | null;
  promptTokensProcessed: number;
  promptTokensCached: number;
  promptSeconds: number;
  tokensPredicted: number;
  predictedSeconds: number;
}

export function observeServed(result: ServedRequest, startedAtMs: number, firstTokenAtMs: number | null, doneAtMs: number): ServedObservation {
  const predicted = result.usage.completionTokens;
  return {
    replica: result.replica,
    timeToFirstTokenS: firstTokenAtMs === null ? null : (firstTokenAtMs - startedAtMs) / 1000,
    timePerOutputTokenS: firstTokenAtMs === null || predicted < 2 ? null : (doneAtMs - firstTokenAtMs) / 1000 / (predicted - 1),
    promptTokensProcessed: Math.max(0, result.usage.promptTokens - result.reusedTokens),
    promptTokensCached: result.reusedTokens,
    promptSeconds: result.timings.prefillMs / 1000,
    tokensPredicted: predicted,
    predictedSeconds: result.timings.decodeMs / 1000,
  };
}

/** One request's clock, from entering the queue; core's own stream of its tokens marks the first. */
export interface RequestTimer {
  /** A chunk of the answer reached core (an empty one marks nothing). */
  tokens(chunk: { tokens: readonly number[]; text: string }): void;
  served(result: ServedRequest): void;
}

export class RequestMetrics implements DispatchObserver {
  readonly registry = new Registry();
  private readonly labelNames = ['replica'] as const;
  private readonly queueWait = this.histogram('queue_wait_seconds', 'How long requests waited in the queue before a replica took them.', QUEUE_WAIT_BUCKETS_S);
  private readonly routeDecision = this.histogram('route_decision_seconds', "The router's time to choose the replica a request was bound to.", ROUTE_BUCKETS_S);
  private readonly timeToFirstToken = this.histogram(
    'time_to_first_token_seconds',
    'From a request entering the queue to its first token reaching core.',
    TTFT_BUCKETS_S,
  );
  private readonly timePerOutputToken = this.histogram(
    'time_per_output_token_seconds',
    "A request's mean time between tokens after its first, as core received them.",
    TPOT_BUCKETS_S,
  );
  private readonly routed = this.counter('requests_routed_total', 'Requests the router sent to the replica.');
  private readonly promptTokens = this.counter(
    'prompt_tokens_total',
    "Prompt tokens processed, excluding those reused from the KV cache (llama-server's meaning).",
  );
  private readonly promptTokensCached = this.counter('prompt_tokens_cached_total', "Prompt tokens reused from the replica's KV cache.");
  private readonly cacheHitTokens = this.counter(
    'cache_hit_tokens_total',
    "Prompt tokens reused from the replica's KV cache (the same count as manifold_prompt_tokens_cached_total).",
  );
  private readonly promptSeconds = this.counter('prompt_seconds_total', 'Seconds the replica spent processing prompts, as its engine timed them.');
  private readonly tokensPredicted = this.counter('tokens_predicted_total', 'Tokens the replica generated.');
  private readonly predictedSeconds = this.counter('tokens_predicted_seconds_total', 'Seconds the replica spent generating tokens, as its engine timed them.');
  /** Replicas whose series exist (zeroing a histogram again would reset it). */
  private readonly zeroed = new Set<number>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Starts every series of these replicas at zero, so one that has served nothing yet still shows (a known replica keeps its counts). */
  zeroSeries(replicas: readonly number[]): void {
    for (const replica of replicas) {
      if (this.zeroed.has(replica)) continue;
      this.zeroed.add(replica);
      for (const histogram of [this.queueWait, this.routeDecision, this.timeToFirstToken, this.timePerOutputToken]) histogram.zero({ replica });
      for (const counter of [
        this.routed,
        this.promptTokens,
        this.promptTokensCached,
        this.cacheHitTokens,
        this.promptSeconds,
        this.tokensPredicted,
        this.predictedSeconds,
      ])
        counter.inc({ replica }, 0);
    }
  }

  bound(replica: number, waits: { queuedMs: number; routeMs: number }): void {
    const labels = { replica };
    this.routed.inc(labels);
    this.queueWait.observe(labels, waits.queuedMs / 1000);
    this.routeDecision.observe(labels, waits.routeMs / 1000);
  }

  startRequest(): RequestTimer {
    const startedAt = this.now();
    let firstTokenAt: number | null = null;
    return {
      tokens: (chunk) => {
        if (chunk.tokens.length > 0 || chunk.text !== '') firstTokenAt ??= this.now();
      },
      served: (result) => this.noteServed(observeServed(result, startedAt, firstTokenAt, this.now())),
    };
  }

  private noteServed(o: ServedObservation): void {
    const labels = { replica: o.replica };
    if (o.timeToFirstTokenS !== null) this.timeToFirstToken.observe(labels, o.timeToFirstTokenS);
    if (o.timePerOutputTokenS !== null) this.timePerOutputToken.observe(labels, o.timePerOutputTokenS);
    this.promptTokens.inc(labels, o.promptTokensProcessed);
    this.promptTokensCached.inc(labels, o.promptTokensCached);
    this.cacheHitTokens.inc(labels, o.promptTokensCached);
    this.promptSeconds.inc(labels, o.promptSeconds);
    this.tokensPredicted.inc(labels, o.tokensPredicted);
    this.predictedSeconds.inc(labels, o.predictedSeconds);
  }

  private histogram(name: string, help: string, buckets: number[]): Histogram<'replica'> {
    return new Histogram({ name: `manifold_${name}`, help, labelNames: this.labelNames, buckets, registers: [this.registry] });
  }

  private counter(name: string, help: string): Counter<'replica'> {
    return new Counter({ name: `manifold_${name}`, help, labelNames: this.labelNames, registers: [this.registry] });
  }
}
