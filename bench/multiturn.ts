/**
 * multiturn: the same seeded multi-turn workload (and a shared-prefix one) against the same replicas
 * under each routing policy, every policy on freshly started replicas so no run inherits another's cache.
 */
import type { RoutingPolicy } from '../electron/core/config/run-config.js';
import { withServed } from './served-replicas.js';
import { table } from './stats.js';
import { multiTurn, sharedPrefix, summarise, type MultiTurnOptions, type SharedPrefixOptions } from './workload.js';

export interface MultiTurnBenchOptions {
  model: string;
  replicas: number;
  slots: number;
  threads: number;
  contextSize: number;
  multiTurn: MultiTurnOptions;
  sharedPrefix: SharedPrefixOptions;
}

const POLICIES: RoutingPolicy[] = ['prefix', 'round-robin', 'least-loaded'];

export async function runMultiTurn(options: MultiTurnBenchOptions) {
  const rows: (ReturnType<typeof summarise> & { workload: string; policy: RoutingPolicy })[] = [];
  const config = (policy: RoutingPolicy) => ({
    model: options.model,
    replicas: options.replicas,
    routing: policy,
    engine: { slots: options.slots, threads: options.threads, contextSize: options.contextSize },
  });
  for (const policy of POLICIES) {
    const run = await withServed(config(policy), (target, served) => multiTurn(target, options.multiTurn, served.workstation.tokenizer));
    rows.push({ workload: 'multi-turn', policy, ...summarise(run.results, run.wallMs) });
  }
  for (const policy of POLICIES) {
    const run = await withServed(config(policy), (target) => sharedPrefix(target, options.sharedPrefix));
    rows.push({ workload: 'shared-prefix', policy, ...summarise(run.results, run.wallMs) });
  }
  const text = table(
    ['workload', 'policy', 'requests', 'errors', 'cache hit', 'TTFT p50 ms', 'TTFT p99 ms', 'decode tok/s', 'out tok/s', 'req/s'],
    rows.map((r) => [r.workload, r.policy, String(r.requests), String(r.errors), `${(r.cacheHitRate * 100).toFixed(1)}%`, r.ttftP50Ms, r.ttftP99Ms, r.decodeTokensPerSecond, r.completionTokensPerSecond, r.requestsPerSecond]),
  );
  const ratio = (workload: string, field: 'cacheHitRate' | 'ttftP50Ms', invert: boolean) => {
    const prefix = rows.find((r) => r.workload === workload && r.policy === 'prefix')![field];
    const rr = rows.find((r) => r.workload === workload && r.policy === 'round-robin')![field];
    return invert ? rr / prefix : prefix / rr;
  };
  const ratios = {
    multiTurnCacheHitPrefixOverRoundRobin: ratio('multi-turn', 'cacheHitRate', false),
    multiTurnTtftP50RoundRobinOverPrefix: ratio('multi-turn', 'ttftP50Ms', true),
    sharedPrefixCacheHitPrefixOverRoundRobin: ratio('shared-prefix', 'cacheHitRate', false),
    sharedPrefixTtftP50RoundRobinOverPrefix: ratio('shared-prefix', 'ttftP50Ms', true),
  };
  return { config: { ...options }, rows, ratios, text: `${text}\n\nratios: ${JSON.stringify(ratios, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toFixed(2)) : v))}` };
}
