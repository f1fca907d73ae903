/**
 * peer-chat (parts 2 and 3 of `bench -- peer`): one llama-server holding all the slots against Manifold with
 * the same slots split into replicas (prefix routing), on the same model file and cores, on the
 * realistic multi-turn chat of bench/chat-workload.ts, side by side in one run, each server freshly
 * started: throughput, TTFT p50/p90, cache hit and its share of the oracle line. llama-server gets
 * `threads` threads; each Manifold replica gets its share of them, at least one. Part 3 runs the same
 * again with the cache of evicted conversations off — llama-server's host-memory prompt cache
 * (`--cache-ram 0`), Manifold's tiered prefix cache (`engine.prefixCache` budgets of 0, which a
 * llama-server engine takes as `--cache-ram 0`) — so each cache's gain reads beside the others'. Each part
 * may run its servers several times over (`repeats`, bench/repeated-chat.ts: another script and turn order
 * each time, the servers in turn), and each row pools its runs: llama-server's TTFT p50 on one script
 * read anywhere from 469 to 1,550 ms over four sessions at the same hit, and every ratio moved with it.
 */
import { PREFIX_CACHE_OFF } from '../common/prefix-cache.js';
import type { EngineKind } from '../core/config/run-config.js';
import { Tokenizer } from '../core/tokenizer.js';
import { oracleOf, realisticChat, type ChatWorkloadOptions } from './chat-workload.js';
import { startLlamaServerNode } from './llama-server-node.js';
import { byRepeat, pooled, repeatRatios, runRepeated, type ChatRun } from './repeated-chat.js';
import { withServed } from './served-replicas.js';
import { bootstrapMedianRatio, table } from './stats.js';

/**
 * A Manifold layout: replica count (it must divide `slots`) and the engine kind the replicas run; with
 * `flashAttention`, the engines' flash attention set so instead of Manifold's default (for a llama-server
 * engine on the CPU, off: core/llama-server/llama-server-args.ts).
 */
export interface PeerLayout {
  replicas: number;
  kind: EngineKind;
  flashAttention?: boolean;
}

export interface PeerChatOptions {
  model: string;
  /** Slots in all: llama-server's `-np`, split evenly among Manifold's replicas. */
  slots: number;
  /** llama-server's threads, shared among Manifold's replicas. */
  threads: number;
  /** Tokens per slot. */
  contextSize: number;
  /** Part 2: the Manifold layouts to measure, the cache of evicted conversations on. */
  layouts: PeerLayout[];
  /** Part 3: the layouts to measure again with that cache off, and llama-server alone with it off; none skips part 3. */
  cacheOff: PeerLayout[];
  chat: ChatWorkloadOptions;
  /** How many times each part runs its servers (default 1), each time on another script (the chat's seed plus the repeat). */
  repeats?: number;
}

/** `peer`: llama-server alone; `cache`: whether the cache of evicted conversations was on. */
type Row = ReturnType<typeof pooled> & { server: string; peer: boolean; threads: number; cache: boolean };

const percent = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '-');

/** `row`'s throughput and TTFT over `base`'s: the TTFT p50 ratio with its 90% bootstrap interval, and both by repeat where there are several. */
const over = (row: Row, base: Row) => ({
  throughput: row.requestsPerSecond / base.requestsPerSecond,
  ttftP50: row.ttftP50Ms / base.ttftP50Ms,
  ttftP50Interval: bootstrapMedianRatio(row.ttftsMs, base.ttftsMs),
  ttftP90: row.ttftP90Ms / base.ttftP90Ms,
  throughputByRepeat: byRepeat(row.requestsPerSecondByRepeat, base.requestsPerSecondByRepeat),
  ttftP50ByRepeat: byRepeat(row.ttftP50ByRepeatMs, base.ttftP50ByRepeatMs),
});

/** Each Manifold row against llama-server's row with the cache as it had it. */
function againstPeer(rows: readonly Row[]) {
  return rows
    .filter((r) => !r.peer)
    .map((r) => ({
      server: r.server,
      cache: r.cache,
      ...over(
        r,
        rows.find((p) => p.peer && p.cache === r.cache)!,
      ),
    }));
}

/** For each server measured both ways: what the cache of evicted conversations gave it. */
function cacheGains(rows: readonly Row[]) {
  return rows
    .filter((r) => !r.cache)
    .map((off) => {
      const on = rows.find((r) => r.server === off.server && r.cache)!;
      return { server: off.server, hitOn: on.cacheHitRate, hitOff: off.cacheHitRate, ...over(on, off) };
    });
}

/** The rows, with a column for the cache of evicted conversations where they differ in it. */
const rowTable = (rows: readonly Row[], cacheColumn: boolean): string =>
  table(
    [
      'server',
      'threads',
      ...(cacheColumn ? ['evicted cache'] : []),
      'requests',
      'errors',
      'oracle',
      'cache hit',
      'of oracle',
      'TTFT p50 ms',
      'TTFT p90 ms',
      'req/s',
      'total tok/s',
    ],
    rows.map((r) => [
      r.server,
      String(r.threads),
      ...(cacheColumn ? [r.cache ? 'on' : 'off'] : []),
      String(r.requests),
      String(r.errors),
      percent(r.oracle),
      percent(r.cacheHitRate),
      percent(r.cacheHitRate / r.oracle),
      r.ttftP50Ms,
      r.ttftP90Ms,
      r.requestsPerSecond,
      r.totalTokensPerSecond,
    ]),
  );

const ratioLines = (ratios: ReturnType<typeof againstPeer>): string[] =>
  ratios.map(
    (r) =>
      `${r.server} / llama-server, the cache ${r.cache ? 'on' : 'off'} in both: throughput ${r.throughput.toFixed(2)}×${r.throughputByRepeat ? ` (by repeat ${repeatRatios(r.throughputByRepeat)})` : ''} (above 1: Manifold serves more), TTFT p50 ${r.ttftP50.toFixed(2)}× (90% bootstrap interval ${r.ttftP50Interval.low.toFixed(2)}–${r.ttftP50Interval.high.toFixed(2)}×${r.ttftP50ByRepeat ? `; by repeat ${repeatRatios(r.ttftP50ByRepeat)}` : ''}), p90 ${r.ttftP90.toFixed(2)}× (below 1: Manifold answers sooner)`,
  );

export async function runPeerChat(options: PeerChatOptions) {
  for (const { replicas } of options.layouts) {
    if (options.slots % replicas !== 0) throw new Error(`peer-chat: ${options.slots} slots do not split evenly into ${replicas} replicas`);
  }
  // Part 3 reads each layout beside its part 2 row.
  for (const off of options.cacheOff) {
    if (!options.layouts.some((l) => l.replicas === off.replicas && l.kind === off.kind && l.flashAttention === off.flashAttention))
      throw new Error(`peer-chat: ${off.replicas} ${off.kind} replicas with the cache off are not among the layouts with it on`);
  }
  const tokenizer = await Tokenizer.open(options.model);
  const rows: Row[] = [];
  /** A part's server: llama-server alone (`peer`) or a Manifold layout. */
  type Server = { peer: true } | { peer: false; layout: PeerLayout };
  // The oracle counts the prompts as each server tokenized them: Manifold's keep its answers' sampled ids
  // (its workstation's tokenizer remembers them), llama-server's are tokenized from their text.
  const runPeer = async (cache: boolean, seed: number): Promise<ChatRun> => {
    const node = await startLlamaServerNode({
      model: options.model,
      slots: options.slots,
      contextSize: options.contextSize,
      threads: options.threads,
      ...(cache ? {} : { cacheRamMib: 0 }),
    });
    try {
      const run = await realisticChat({ baseURL: `${node.url}/v1`, model: 'bench', logprobIds: true }, { ...options.chat, seed });
      return { ...run, oracle: await oracleOf(run.results, tokenizer) };
    } finally {
      await node.stop();
    }
  };
  /** Each replica's share of llama-server's threads, at least one. */
  const threadsOf = (replicas: number): number => Math.max(1, Math.floor(options.threads / replicas));
  const runManifold = ({ replicas, kind, flashAttention }: PeerLayout, cache: boolean, seed: number): Promise<ChatRun> => {
    const threads = threadsOf(replicas);
    const engine = {
      kind,
      slots: options.slots / replicas,
      threads,
      contextSize: options.contextSize,
      ...(flashAttention === undefined ? {} : { flashAttention }),
      ...(cache ? {} : { prefixCache: PREFIX_CACHE_OFF }),
    };
    const config = { model: options.model, replicas, routing: 'prefix' as const, engine };
    return withServed(config, async (target, served) => {
      const chat = await realisticChat(target, { ...options.chat, seed });
      return { ...chat, oracle: await oracleOf(chat.results, served.workstation.tokenizer) };
    });
  };
  /** Runs a part's servers, `repeats` times over, and adds a row for each. */
  const part = async (layouts: readonly PeerLayout[], cache: boolean): Promise<void> => {
    const servers: Server[] = [{ peer: true }, ...layouts.map((layout) => ({ peer: false as const, layout }))];
    const runs = await runRepeated(servers, options.repeats ?? 1, (server, repeat) => {
      const seed = options.chat.seed + repeat;
      return server.peer ? runPeer(cache, seed) : runManifold(server.layout, cache, seed);
    });
    servers.forEach((server, i) => {
      const row = pooled(runs[i]!, options.chat.conversations);
      if (server.peer) return rows.push({ server: `llama-server, 1 × ${options.slots} slots`, peer: true, threads: options.threads, cache, ...row });
      const { replicas, kind, flashAttention } = server.layout;
      const engine = kind === 'llama-server' ? ' (llama-server engines)' : '';
      const attention = flashAttention === undefined ? '' : `, flash attention ${flashAttention ? 'on' : 'off'}`;
      return rows.push({
        server: `Manifold${engine}, ${replicas} × ${options.slots / replicas} slots${attention}`,
        peer: false,
        threads: replicas * threadsOf(replicas),
        cache,
        ...row,
      });
    });
  };
  try {
    await part(options.layouts, true);
    if (options.cacheOff.length) await part(options.cacheOff, false);
  } finally {
    await tokenizer.dispose();
  }
  const ratios = againstPeer(rows);
  const gains = cacheGains(rows);
  const on = rows.filter((r) => r.cache);
  const text = `${rowTable(on, false)}\n\n${ratioLines(ratios.filter((r) => r.cache)).join('\n')}`;
  const measuredOff = new Set(rows.filter((r) => !r.cache).map((r) => r.server));
  const gainLines = gains.map(
    (g) =>
      `${g.server}: the cache on / off: hit ${percent(g.hitOn)} / ${percent(g.hitOff)}, throughput ${g.throughput.toFixed(2)}× (above 1: the cache serves more), TTFT p50 ${g.ttftP50.toFixed(2)}×, p90 ${g.ttftP90.toFixed(2)}× (below 1: the cache answers sooner)`,
  );
  const offText = measuredOff.size
    ? `${rowTable(
        rows.filter((r) => measuredOff.has(r.server)),
        true,
      )}\n\n${[...ratioLines(ratios.filter((r) => !r.cache)), ...gainLines].join('\n')}`
    : null;
  return { config: { ...options, model: undefined }, rows, ratios, gains, text, offText };
}
