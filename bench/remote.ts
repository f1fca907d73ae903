/**
 * remote: Manifold as a cache-aware gateway in front of 2 llama-server nodes (no local engines), its prefix
 * routing against round-robin across the same nodes (what nginx would do), side by side in one run, each
 * policy on freshly started nodes so no run inherits another's cache. The multi-turn workload of the
 * multiturn benchmark, histories kept as tokens.
 */
import type { RoutingPolicy } from '../core/config/run-config.js';
import { startLlamaServerNode, type LlamaServerNode } from './llama-server-node.js';
import { withServed } from './served-replicas.js';
import { table } from './stats.js';
import { multiTurn, summarise, type MultiTurnOptions } from './workload.js';

export interface RemoteBenchOptions {
  model: string;
  nodes: number;
  slots: number;
  contextSize: number;
  threads: number;
  workload: MultiTurnOptions;
}

const POLICIES: RoutingPolicy[] = ['prefix', 'round-robin'];

export async function runRemote(options: RemoteBenchOptions) {
  const rows: (ReturnType<typeof summarise> & { policy: RoutingPolicy })[] = [];
  for (const policy of POLICIES) {
    const nodes: LlamaServerNode[] = [];
    try {
      for (let i = 0; i < options.nodes; i++)
        nodes.push(await startLlamaServerNode({ model: options.model, slots: options.slots, contextSize: options.contextSize, threads: options.threads }));
      const replicas = nodes.map((n) => ({ url: n.url, kind: 'llama-server' as const, slots: options.slots }));
      const run = await withServed({ model: options.model, routing: policy, replicas }, (target, served) =>
        multiTurn(target, options.workload, served.workstation.tokenizer),
      );
      rows.push({ policy, ...summarise(run.results, run.wallMs) });
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
    }
  }
  const text = table(
    ['policy', 'requests', 'errors', 'cache hit', 'TTFT p50 ms', 'TTFT p90 ms', 'out tok/s', 'total tok/s', 'req/s'],
    rows.map((r) => [
      r.policy,
      String(r.requests),
      String(r.errors),
      `${(r.cacheHitRate * 100).toFixed(1)}%`,
      r.ttftP50Ms,
      r.ttftP90Ms,
      r.completionTokensPerSecond,
      r.totalTokensPerSecond,
      r.requestsPerSecond,
    ]),
  );
  const [prefix, roundRobin] = rows as [(typeof rows)[number], (typeof rows)[number]];
  const ratios = {
    cacheHit: prefix.cacheHitRate / roundRobin.cacheHitRate,
    ttftP50: roundRobin.ttftP50Ms / prefix.ttftP50Ms,
    ttftP90: roundRobin.ttftP90Ms / prefix.ttftP90Ms,
  };
  return {
    config: { ...options, model: undefined },
    rows,
    ratios,
    text: `${text}\n\nprefix over round-robin: cache hit ${ratios.cacheHit.toFixed(2)}×, TTFT p50 ${ratios.ttftP50.toFixed(2)}× better, p90 ${ratios.ttftP90.toFixed(2)}× better`,
  };
}
