/**
 * multiturn: prefix routing against round-robin, side by side in one run, on a realistic multi-turn chat
 * (bench/chat-workload.ts: histories kept as text through /v1/chat/completions with SSE) in two
 * regimes — slot pressure (more conversations than slots, a conversation's prefix evicted when another
 * takes its slot) and enough slots — and on a shared-prefix workload. Each row reads its cache hit
 * against the oracle line (bench/oracle.ts): the share of prompt tokens any router could have reused.
 * Each regime's reading also says how many times prefix routing's prompt tokens round-robin prefilled,
 * and how many times the oracle's: TTFT grows with the tokens prefilled, so the second is about the most
 * any router could gain on TTFT over that round-robin. A regime may shape its own chat (shorter follow-ups).
 * Both policies run with the engines' prefix cache on; a regime may add round-robin with it off, the
 * baseline as it was before the cache existed. A regime may name its replicas' engine kind (slot pressure
 * on llama-server children, the default engine wherever its binary is installed, where prefixes move
 * between replicas as slot files); otherwise it runs the process's default. Every run is on freshly
 * started replicas so none inherits another's cache. A regime may run its variants several times over
 * (`repeats`: another script and turn order each time, the variants in turn), so that its ratios rest on
 * more requests than one run gives: round-robin's TTFTs split between turns that find their history and
 * turns that prefill it whole, and the median of one run's 80 jumps between the two.
 */
import { PREFIX_CACHE_OFF } from '../common/prefix-cache.js';
import { ensureLlamaServer } from '../build/llama-server.js';
import { defaultEngineKind } from '../core/engine-kinds/default-engine-kind.js';
import type { EngineKind, RoutingPolicy } from '../core/config/run-config.js';
import { oracleOf, realisticChat, type ChatWorkloadOptions } from './chat-workload.js';
import { byRepeat, pooled, repeatRatios, runRepeated, type ChatRun } from './repeated-chat.js';
import { withServed } from './served-replicas.js';
import { bootstrapMedianRatio, table } from './stats.js';
import { sharedPrefix, summarise, type SharedPrefixOptions } from './workload.js';

export interface ChatRegime {
  name: string;
  replicas: number;
  slots: number;
  /** Also run round-robin with the engines' prefix cache off. */
  uncachedBaseline?: boolean;
  /** The replicas' engine kind (`llama-server` builds its binary first if need be); absent: the process's default. */
  kind?: EngineKind;
  /** Where its chat differs from the run's (another turn shape). */
  chat?: Partial<ChatWorkloadOptions>;
  /**
   * How many times each variant runs (default 1), each time on another script and turn order (the chat's
   * seed plus the repeat); a row pools its repeats' requests, and its TTFT p50 by repeat is kept beside.
   */
  repeats?: number;
}

export interface MultiTurnBenchOptions {
  model: string;
  threads: number;
  contextSize: number;
  regimes: ChatRegime[];
  chat: ChatWorkloadOptions;
  sharedPrefix: SharedPrefixOptions & { replicas: number; slots: number };
}

const POLICIES: RoutingPolicy[] = ['prefix', 'round-robin'];

type Row = ReturnType<typeof pooled> & { workload: string; layout: string; engine: string; policy: RoutingPolicy; prefixCache: boolean };

const percent = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '-');

export async function runMultiTurn(options: MultiTurnBenchOptions) {
  const rows: Row[] = [];
  const defaultKind = defaultEngineKind();
  const config = (policy: RoutingPolicy, replicas: number, slots: number, prefixCache = true, kind?: EngineKind) => ({
    model: options.model,
    replicas,
    routing: policy,
    engine: {
      ...(kind ? { kind } : {}),
      slots,
      threads: options.threads,
      contextSize: options.contextSize,
      ...(prefixCache ? {} : { prefixCache: PREFIX_CACHE_OFF }),
    },
  });
  for (const regime of options.regimes) {
    if (regime.kind === 'llama-server') await ensureLlamaServer();
    const variants = [
      ...POLICIES.map((policy) => ({ policy, prefixCache: true })),
      ...(regime.uncachedBaseline ? [{ policy: 'round-robin' as const, prefixCache: false }] : []),
    ];
    const chat = { ...options.chat, ...regime.chat };
    const runs = await runRepeated(variants, regime.repeats ?? 1, ({ policy, prefixCache }, repeat): Promise<ChatRun> =>
      withServed(config(policy, regime.replicas, regime.slots, prefixCache, regime.kind), async (target, served) => {
        const run = await realisticChat(target, { ...chat, seed: chat.seed + repeat });
        return { ...run, oracle: await oracleOf(run.results, served.workstation.tokenizer) };
      }),
    );
    variants.forEach(({ policy, prefixCache }, v) => {
      rows.push({
        workload: regime.name,
        layout: `${regime.replicas} × ${regime.slots} slots`,
        engine: regime.kind ?? defaultKind,
        policy,
        prefixCache,
        ...pooled(runs[v]!, chat.conversations),
      });
    });
  }
  const shared = options.sharedPrefix;
  for (const policy of POLICIES) {
    const run = await withServed(config(policy, shared.replicas, shared.slots), (target) => sharedPrefix(target, shared));
    rows.push({
      workload: 'shared-prefix',
      layout: `${shared.replicas} × ${shared.slots} slots`,
      engine: defaultKind,
      policy,
      prefixCache: true,
      ...summarise(run.results, run.wallMs),
      oracle: NaN,
      oracleMismatches: 0,
    });
  }
  const text = table(
    [
      'workload',
      'replicas',
      'engine',
      'policy',
      'prefix cache',
      'requests',
      'errors',
      'oracle',
      'cache hit',
      'of oracle',
      'TTFT p50 ms',
      'TTFT p90 ms',
      'req/s',
      'out tok/s',
      'stay',
    ],
    rows.map((r) => [
      r.workload,
      r.layout,
      r.engine,
      r.policy,
      r.prefixCache ? 'on' : 'off',
      String(r.requests),
      String(r.errors),
      percent(r.oracle),
      percent(r.cacheHitRate),
      percent(r.cacheHitRate / r.oracle),
      r.ttftP50Ms,
      r.ttftP90Ms,
      r.requestsPerSecond,
      r.completionTokensPerSecond,
      percent(r.stickiness),
    ]),
  );
  const ratios = Object.fromEntries(
    [...options.regimes.map((r) => r.name), 'shared-prefix'].map((workload) => {
      const [prefix, roundRobin] = POLICIES.map((policy) => rows.find((r) => r.workload === workload && r.policy === policy && r.prefixCache)!) as [Row, Row];
      const uncached = rows.find((r) => r.workload === workload && !r.prefixCache);
      return [
        workload,
        {
          cacheHitPrefixOverRoundRobin: prefix.cacheHitRate / roundRobin.cacheHitRate,
          ttftP50RoundRobinOverPrefix: roundRobin.ttftP50Ms / prefix.ttftP50Ms,
          ttftP50RoundRobinOverPrefixInterval: bootstrapMedianRatio(roundRobin.ttftsMs, prefix.ttftsMs),
          ttftP50RoundRobinOverPrefixByRepeat: byRepeat(roundRobin.ttftP50ByRepeatMs, prefix.ttftP50ByRepeatMs),
          ttftP90RoundRobinOverPrefix: roundRobin.ttftP90Ms / prefix.ttftP90Ms,
          prefixHitOfOracle: prefix.cacheHitRate / prefix.oracle,
          uncachedRoundRobinOverPrefix: (1 - roundRobin.cacheHitRate) / (1 - prefix.cacheHitRate),
          uncachedRoundRobinOverOracle: (1 - roundRobin.cacheHitRate) / (1 - prefix.oracle),
          ...(uncached
            ? {
                ttftP50UncachedRoundRobinOverPrefix: uncached.ttftP50Ms / prefix.ttftP50Ms,
                ttftP90UncachedRoundRobinOverPrefix: uncached.ttftP90Ms / prefix.ttftP90Ms,
              }
            : {}),
        },
      ];
    }),
  );
  const mismatches = rows.reduce((s, r) => s + r.oracleMismatches, 0);
  const readings = Object.entries(ratios).map(
    ([workload, r]) =>
      `${workload}: prefix over round-robin: cache hit ${r.cacheHitPrefixOverRoundRobin.toFixed(2)}×, TTFT p50 ${r.ttftP50RoundRobinOverPrefix.toFixed(2)}× better (90% bootstrap interval ${r.ttftP50RoundRobinOverPrefixInterval.low.toFixed(2)}–${r.ttftP50RoundRobinOverPrefixInterval.high.toFixed(2)}×${
        r.ttftP50RoundRobinOverPrefixByRepeat ? `; by repeat ${repeatRatios(r.ttftP50RoundRobinOverPrefixByRepeat)}` : ''
      }), p90 ${r.ttftP90RoundRobinOverPrefix.toFixed(2)}× better${Number.isFinite(r.prefixHitOfOracle) ? `; prefix hit ${percent(r.prefixHitOfOracle)} of the oracle; round-robin prefilled ${r.uncachedRoundRobinOverPrefix.toFixed(2)}× prefix's prompt tokens, ${r.uncachedRoundRobinOverOracle.toFixed(2)}× the oracle's` : ''}${
        r.ttftP50UncachedRoundRobinOverPrefix === undefined
          ? ''
          : `; over round-robin without the prefix cache: TTFT p50 ${r.ttftP50UncachedRoundRobinOverPrefix.toFixed(2)}× better, p90 ${r.ttftP90UncachedRoundRobinOverPrefix!.toFixed(2)}× better`
      }`,
  );
  const warning = mismatches ? `\n(${mismatches} prompts tokenized to another length than the server counted: the oracle is approximate)` : '';
  return { config: { ...options, model: undefined }, rows, ratios, text: `${text}\n\n${readings.join('\n')}${warning}` };
}
