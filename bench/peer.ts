/**
 * peer: Manifold side by side with llama.cpp's own `llama-server` (built from node-llama-cpp's bundled source,
 * so the same llama.cpp), on the same model file, slots and threads, in one run. Part 1 (runPeerServe): one
 * llama-server with `-np S` against one Manifold replica with S slots of each engine kind (node-llama-cpp, and
 * llama-server as the replica's engine), all through HTTP with SSE, the same requests in rotating order. Two
 * peers run: one as a user starts it (llama.cpp's flash attention `auto`, on for the CPU), and one with `-fa
 * off`, the flag Manifold's own llama-server child gets on the CPU (`resolvedFlashAttention` in
 * core/llama-server/llama-server-args.ts), so the front's cost on top of the same engine and `-fa`
 * reads apart from what the flag gains. The scenarios: one stream alone (the median stream's decode rate,
 * TTFT) and S fresh prompts sent at once (the order prompts are served in: first/median/last TTFT, total output rate). The
 * front's share is what the client measures beyond what each server reports of itself. A full run does part 1
 * at 2 threads (every core of the machine it was written on) and at 1 (a core left to the front and the
 * client). Parts 2 and 3 (bench/peer-chat.ts) split the slots into replicas on a multi-turn chat, the cache
 * of evicted conversations on and then off.
 */
import OpenAI from 'openai';
import { runPeerChat, type PeerChatOptions } from './peer-chat.js';
import { startLlamaServerNode } from './llama-server-node.js';
import { withServed } from './served-replicas.js';
import { mean, percentile, seeded, table } from './stats.js';
import { freshPrompts as prompts, streamRequest, type ClientTarget, type RequestResult } from './workload.js';

export interface PeerServeOptions {
  model: string;
  slots: number;
  threads: number;
  /** Tokens per slot. */
  contextSize: number;
  promptTokens: number;
  answerTokens: number;
  /** Rounds of the S-at-once scenario on each server. */
  rounds: number;
  /**
   * Rounds of the one-stream scenario on each server (cheap: one prompt each); more of them, and the
   * median decode rate, keep a burst of other work on a shared machine from deciding the ratio.
   */
  loneRounds: number;
  seed: number;
}

const SERVERS = ['llama-server', 'llama-server -fa off', 'Manifold', 'Manifold (llama-server engine)'] as const;
type Server = (typeof SERVERS)[number];
type PeerServer = 'llama-server' | 'llama-server -fa off';
type Scenario = 'one stream' | 'S at once';

interface Round {
  server: Server;
  scenario: Scenario;
  results: RequestResult[];
  wallMs: number;
}

async function round(target: ClientTarget, server: Server, scenario: Scenario, batch: number[][], options: PeerServeOptions): Promise<Round> {
  const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench', maxRetries: 0 });
  const started = performance.now();
  const results = await Promise.all(
    batch.map((prompt, i) => streamRequest(client, target.model, { kind: 'completion', prompt }, options.answerTokens, options.seed + i)),
  );
  const failed = results.find((r) => r.error !== null);
  if (failed) throw new Error(`${server} failed a request: ${failed.error}`);
  return { server, scenario, results, wallMs: performance.now() - started };
}

function summariseServer(rounds: readonly Round[], server: Server, scenario: Scenario) {
  const mine = rounds.filter((r) => r.server === server && r.scenario === scenario);
  const results = mine.flatMap((r) => r.results);
  const firstTtfts = mine.map((r) => Math.min(...r.results.map((x) => x.ttftMs)));
  const lastTtfts = mine.map((r) => Math.max(...r.results.map((x) => x.ttftMs)));
  const completion = results.reduce((s, r) => s + r.completionTokens, 0);
  return {
    server,
    scenario,
    requests: results.length,
    ttftFirstMs: mean(firstTtfts),
    ttftP50Ms: percentile(
      results.map((r) => r.ttftMs),
      50,
    ),
    ttftLastMs: mean(lastTtfts),
    /** Per stream, as the client sees it (the median stream). */
    decodeTokensPerSecond: percentile(
      results.map((r) => r.decodeTokensPerSecond),
      50,
    ),
    /** Per stream, as the server reports it (the median stream). */
    serverDecodeTokensPerSecond: percentile(
      results.map((r) => r.serverDecodeTokensPerSecond ?? Number.NaN),
      50,
    ),
    /** All output tokens over the rounds' wall time. */
    outputTokensPerSecond: (completion * 1000) / mine.reduce((s, r) => s + r.wallMs, 0),
    /** Client TTFT beyond the server's own time to first token: the HTTP front's share (IPC included for Manifold). */
    frontTtftP50Ms: percentile(
      results.map((r) => r.ttftMs - (r.serverTtftMs ?? Number.NaN)),
      50,
    ),
  };
}

export async function runPeerServe(options: PeerServeOptions) {
  const random = seeded(options.seed);
  const rounds: Round[] = [];
  const replica = (kind: 'node-llama-cpp' | 'llama-server') => ({
    model: options.model,
    replicas: 1,
    engine: { kind, slots: options.slots, threads: options.threads, contextSize: options.contextSize },
  });
  await withServed(replica('node-llama-cpp'), (manifold) =>
    withServed(replica('llama-server'), async (manifoldOnLlamaServer) => {
      const peerOptions = { model: options.model, slots: options.slots, contextSize: options.contextSize, threads: options.threads };
      const peer = await startLlamaServerNode(peerOptions);
      const peerFaOff = await startLlamaServerNode({ ...peerOptions, flashAttention: 'off' }).catch(async (error: unknown) => {
        await peer.stop();
        throw error;
      });
      try {
        const targets: Record<Server, ClientTarget> = {
          'llama-server': { baseURL: `${peer.url}/v1`, model: manifold.model },
          'llama-server -fa off': { baseURL: `${peerFaOff.url}/v1`, model: manifold.model },
          Manifold: manifold,
          'Manifold (llama-server engine)': manifoldOnLlamaServer,
        };
        const warmUp = prompts(1, 16, random);
        for (const server of SERVERS) await round(targets[server], server, 'one stream', warmUp, { ...options, answerTokens: 4 });
        for (let i = 0; i < Math.max(options.rounds, options.loneRounds); i++) {
          // Rotate who goes first, so none always runs on the others' warm caches.
          const order = SERVERS.map((_, k) => SERVERS[(k + i) % SERVERS.length]!);
          const single = prompts(1, options.promptTokens, random);
          if (i < options.loneRounds) for (const server of order) rounds.push(await round(targets[server], server, 'one stream', single, options));
          if (i >= options.rounds) continue;
          const together = prompts(options.slots, options.promptTokens, random);
          for (const server of order) rounds.push(await round(targets[server], server, 'S at once', together, options));
        }
      } finally {
        await Promise.all([peer.stop(), peerFaOff.stop()]);
      }
    }),
  );

  const rows = (['one stream', 'S at once'] as const).flatMap((scenario) => SERVERS.map((server) => summariseServer(rounds, server, scenario)));
  const row = (server: Server, scenario: Scenario) => rows.find((r) => r.server === server && r.scenario === scenario)!;
  const ratiosOf = (server: Server, peer: PeerServer) => ({
    oneStreamDecode: row(server, 'one stream').decodeTokensPerSecond / row(peer, 'one stream').decodeTokensPerSecond,
    oneStreamTtft: row(server, 'one stream').ttftP50Ms / row(peer, 'one stream').ttftP50Ms,
    togetherOutput: row(server, 'S at once').outputTokensPerSecond / row(peer, 'S at once').outputTokensPerSecond,
    togetherTtftP50: row(server, 'S at once').ttftP50Ms / row(peer, 'S at once').ttftP50Ms,
    togetherTtftFirst: row(server, 'S at once').ttftFirstMs / row(peer, 'S at once').ttftFirstMs,
  });
  const ratios = {
    'Manifold / llama-server': ratiosOf('Manifold', 'llama-server'),
    'Manifold (llama-server engine) / llama-server': ratiosOf('Manifold (llama-server engine)', 'llama-server'),
    // The front's own cost: the same engine with the same `-fa`.
    'Manifold (llama-server engine) / llama-server -fa off': ratiosOf('Manifold (llama-server engine)', 'llama-server -fa off'),
    'llama-server -fa off / llama-server': ratiosOf('llama-server -fa off', 'llama-server'),
  };
  const text = table(
    [
      'scenario',
      'server',
      'requests',
      'TTFT first ms',
      'TTFT p50 ms',
      'TTFT last ms',
      'decode tok/s p50',
      'server decode tok/s p50',
      'out tok/s',
      'front TTFT ms',
    ],
    rows.map((r) => [
      r.scenario === 'S at once' ? `${options.slots} at once` : r.scenario,
      r.server,
      String(r.requests),
      r.ttftFirstMs,
      r.ttftP50Ms,
      r.ttftLastMs,
      r.decodeTokensPerSecond,
      r.serverDecodeTokensPerSecond,
      r.outputTokensPerSecond,
      r.frontTtftP50Ms,
    ]),
  );
  const ratioText = Object.entries(ratios)
    .map(
      ([pair, values]) =>
        `${pair}: ${Object.entries(values)
          .map(([k, v]) => `${k} ${v.toFixed(2)}×`)
          .join(', ')}`,
    )
    .join('\n');
  return { config: { ...options, model: undefined }, rows, ratios, text: `${text}\n\n${ratioText}` };
}

export interface PeerOptions {
  /** Part 1 once for each: the full run takes the 2 threads that use every core, and 1, which leaves a core to the front and the client. */
  serve: readonly PeerServeOptions[];
  chat: PeerChatOptions;
}

/**
 * Every part, in one run: one server against one replica (at each thread count), then all the slots against replicas on a multi-turn chat, with the
 * cache of evicted conversations on and off.
 */
export async function runPeer(options: PeerOptions) {
  const serve: Awaited<ReturnType<typeof runPeerServe>>[] = [];
  for (const serveOptions of options.serve) serve.push(await runPeerServe(serveOptions));
  const chat = await runPeerChat(options.chat);
  const text = [
    ...options.serve.map(
      (o, i) =>
        `### 1. one llama-server (-np ${o.slots}, ${o.threads} thread${o.threads === 1 ? '' : 's'}) vs one Manifold replica with ${o.slots} slots and as many threads\n\n${serve[i]!.text}`,
    ),
    `### 2. one llama-server (-np ${options.chat.slots}) vs Manifold with ${options.chat.slots} slots split into replicas, multi-turn chat\n\n${chat.text}`,
    ...(chat.offText ? [`### 3. the same with the cache of evicted conversations off, beside it on\n\n${chat.offText}`] : []),
  ].join('\n\n');
  return { serve, chat, text };
}
