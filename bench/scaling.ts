/**
 * scaling: aggregate throughput of R replicas × 1 thread × 1 slot against 1 engine × R slots × R threads
 * on the same cores, under the same multi-turn workload at a fixed concurrency.
 */
import { withServed } from './served-replicas.js';
import { table } from './stats.js';
import { multiTurn, summarise, type MultiTurnOptions } from './workload.js';

export interface ScalingOptions {
  model: string;
  replicas: number;
  contextSize: number;
  workload: MultiTurnOptions;
}

export async function runScaling(options: ScalingOptions) {
  const r = options.replicas;
  const layouts = [
    { name: `${r} replicas × 1 thread × 1 slot`, config: { replicas: r, engine: { slots: 1, threads: 1, contextSize: options.contextSize } } },
    { name: `1 engine × ${r} slots × ${r} threads`, config: { replicas: 1, engine: { slots: r, threads: r, contextSize: options.contextSize } } },
  ];
  const rows = [];
  for (const layout of layouts) {
    const run = await withServed({ model: options.model, ...layout.config }, (target, served) =>
      multiTurn(target, options.workload, served.workstation.tokenizer),
    );
    rows.push({ layout: layout.name, ...summarise(run.results, run.wallMs) });
  }
  const text = table(
    ['layout', 'requests', 'errors', 'cache hit', 'TTFT p50 ms', 'out tok/s', 'total tok/s', 'req/s'],
    rows.map((x) => [
      x.layout,
      String(x.requests),
      String(x.errors),
      `${(x.cacheHitRate * 100).toFixed(1)}%`,
      x.ttftP50Ms,
      x.completionTokensPerSecond,
      x.totalTokensPerSecond,
      x.requestsPerSecond,
    ]),
  );
  const ratio = rows[0]!.totalTokensPerSecond / rows[1]!.totalTokensPerSecond;
  return { config: { ...options, model: undefined }, rows, ratio, text: `${text}\n\nreplicas / single engine total throughput: ${ratio.toFixed(2)}×` };
}
