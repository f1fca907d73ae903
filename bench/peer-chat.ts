/**
 * peer-chat (part 2 of `bench -- peer`): one llama-server holding all the slots against Manifold with
 * the same slots split into replicas (prefix routing), on the same model file and cores, on the
 * realistic multi-turn chat of bench/chat-workload.ts, side by side in one run, each server freshly
 * started: throughput, TTFT p50/p90, cache hit and its share of the oracle line. llama-server gets
 * `threads` threads; each Manifold replica gets its share of them, at least one.
 */
import type { EngineKind } from '../electron/core/config/run-config.js';
import { Tokenizer } from '../electron/core/tokenizer.js';
import { oracleOf, realisticChat, type ChatTurnResult, type ChatWorkloadOptions } from './chat-workload.js';
import { startLlamaServerNode } from './llama-server-node.js';
import { withServed } from './served-replicas.js';
import { table } from './stats.js';
import { summarise } from './workload.js';

export interface PeerChatOptions {
  model: string;
  /** Slots in all: llama-server's `-np`, split evenly among Manifold's replicas. */
  slots: number;
  /** llama-server's threads, shared among Manifold's replicas. */
  threads: number;
  /** Tokens per slot. */
  contextSize: number;
  /** The Manifold layouts to measure: replica counts (each must divide `slots`) and the engine kind they run. */
  layouts: { replicas: number; kind: EngineKind }[];
  chat: ChatWorkloadOptions;
}

type Row = ReturnType<typeof summarise> & { server: string; threads: number; oracle: number };

const percent = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '-');

export async function runPeerChat(options: PeerChatOptions) {
  for (const { replicas } of options.layouts) {
    if (options.slots % replicas !== 0) throw new Error(`peer-chat: ${options.slots} slots do not split evenly into ${replicas} replicas`);
  }
  const tokenizer = await Tokenizer.open(options.model);
  const rows: Row[] = [];
  const measure = async (server: string, threads: number, run: { results: ChatTurnResult[]; wallMs: number }) => {
    rows.push({ server, threads, ...summarise(run.results, run.wallMs), oracle: (await oracleOf(run.results, tokenizer)).share });
  };
  try {
    const node = await startLlamaServerNode({ model: options.model, slots: options.slots, contextSize: options.contextSize, threads: options.threads });
    try {
      await measure(`llama-server, 1 × ${options.slots} slots`, options.threads, await realisticChat({ baseURL: `${node.url}/v1`, model: 'bench', logprobIds: true }, options.chat));
    } finally {
      await node.stop();
    }
    for (const { replicas, kind } of options.layouts) {
      const threads = Math.max(1, Math.floor(options.threads / replicas));
      const config = { model: options.model, replicas, routing: 'prefix' as const, engine: { kind, slots: options.slots / replicas, threads, contextSize: options.contextSize } };
      const engine = kind === 'llama-server' ? ' (llama-server engines)' : '';
      await measure(`Manifold${engine}, ${replicas} × ${options.slots / replicas} slots`, replicas * threads, await withServed(config, (target) => realisticChat(target, options.chat)));
    }
  } finally {
    await tokenizer.dispose();
  }
  const text = table(
    ['server', 'threads', 'requests', 'errors', 'oracle', 'cache hit', 'of oracle', 'TTFT p50 ms', 'TTFT p90 ms', 'req/s', 'total tok/s'],
    rows.map((r) => [r.server, String(r.threads), String(r.requests), String(r.errors), percent(r.oracle), percent(r.cacheHitRate), percent(r.cacheHitRate / r.oracle), r.ttftP50Ms, r.ttftP90Ms, r.requestsPerSecond, r.totalTokensPerSecond]),
  );
  const [peer, ...manifold] = rows as [Row, ...Row[]];
  const ratios = manifold.map((r) => ({ server: r.server, throughput: r.requestsPerSecond / peer.requestsPerSecond, ttftP50: r.ttftP50Ms / peer.ttftP50Ms, ttftP90: r.ttftP90Ms / peer.ttftP90Ms }));
  const readings = ratios.map((r) => `${r.server} / llama-server: throughput ${r.throughput.toFixed(2)}× (above 1: Manifold serves more), TTFT p50 ${r.ttftP50.toFixed(2)}×, p90 ${r.ttftP90.toFixed(2)}× (below 1: Manifold answers sooner)`);
  return { config: { ...options, model: undefined }, rows, ratios, text: `${text}\n\n${readings.join('\n')}` };
}
