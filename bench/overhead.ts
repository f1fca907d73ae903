/**
 * overhead: the same prompt tokens and sampling through the HTTP front (SSE, the official `openai`
 * client, one replica) and through node-llama-cpp driven in-process on the same model and threads, in a
 * plain process of its own (bench/plain-process.ts), alternating runs: decode tok/s ratio and TTFT delta side by side, with the front's own TTFT share as
 * the server reports it (`timings.front_ms`). Tokens are counted from the ids each event carries
 * (`return_tokens`), since one event may carry several. The HTTP floor is the same client against a
 * server that answers every request at once with one event (no engine, no front): what any HTTP server
 * costs a client in TTFT here, which the in-process path never pays. Decode is compared run by run
 * (each HTTP run against the in-process run beside it), so a burst of other work on a shared machine
 * moves one pair, not the mean; the median of the pairs comes with a 90% bootstrap interval, since one
 * pair's ratio still spreads ±20% here (two contexts in one process, alternating, spread as much). The
 * runs are split between `starts` fresh replicas, each beside a fresh plain process, and the ratio is
 * also given start by start: a process here may run the same decode 10–23% slower than another for its
 * whole life (bench/plain-process.ts), and one start is one draw of that.
 *
 * Each placement runs the whole comparison: `shared` leaves every core to the kernel (the engine, the
 * front and the client wherever it puts them, as a user's machine would); `own core` pins the engine —
 * the replica's child and the plain process — to the last physical core and this process (the front and
 * the client) to the others, as on a machine whose engine runs on a GPU and
 * leaves the CPU to the front. Linux only; skipped, saying why, with fewer than two physical cores.
 *
 * TTFT is also measured on a short prompt (`shortPromptTokens`, `ttftRuns` rounds, the order rotating): on
 * the long prompt a prefill's run-to-run spread (a few ms of ~250) hides a front that costs 2 ms; on a short
 * one the prefill is a few ms and what the HTTP path adds shows, split into the engine child's own time
 * to its first token over in-process and the rest (the front, both IPC hops and the client's HTTP). The
 * same prompt also goes through a bare node:http client (bench/bare-http.ts), to Manifold and to the floor
 * server, so the front's share reads apart from what the `openai` client itself costs; it also reads the
 * engine child's own time from the last event, so the rest reads run by run through it too, apart from
 * the engine process's own spread (its prefill, like its decode, sits a little apart from another's).
 */
import { createServer, type Server } from 'node:http';
import OpenAI from 'openai';
import { PREFIX_CACHE_OFF } from '../common/prefix-cache.js';
import { allowedCpus, pinProcess } from '../core/cpu/cpu-pinning.js';
import { readCpuTopology } from '../core/cpu/cpu-topology.js';
import { engineThreadpoolSize } from '../core/engine/engine-child-env.js';
import { bareFirstToken, type BareFirstToken } from './bare-http.js';
import { startPlainProcess } from './plain-process.js';
import { withServed } from './served-replicas.js';
import { bootstrapMedian, mean, percentile, table } from './stats.js';
import { streamRequest, type ClientTarget } from './workload.js';

export interface OverheadOptions {
  model: string;
  threads: number;
  contextSize: number;
  promptTokens: number;
  answerTokens: number;
  runs: number;
  /** The short prompt's length, and how many pairs measure TTFT on it. */
  shortPromptTokens: number;
  ttftRuns: number;
  placements: Placement[];
  /**
   * Fresh replicas (each beside a fresh plain process) each placement's runs are split between, so no one
   * process's draw of its decode rate sets every pair.
   */
  starts: number;
}

export type Placement = 'shared' | 'own core';

/** The `own core` placement: the engine's CPUs and the front's, and every CPU this process had, to give back after. */
interface CoreSplit {
  engine: number[];
  front: number[];
  before: number[];
}

/** The CPUs for the `own core` placement, or why it cannot run here. */
async function ownCorePlacement(): Promise<CoreSplit | { reason: string }> {
  if (process.platform !== 'linux') return { reason: 'pinning threads is Linux only' };
  const topology = await readCpuTopology();
  if ('unreadable' in topology) return { reason: topology.unreadable };
  if (topology.cores.length < 2) return { reason: 'this machine has one physical core' };
  return { engine: [...topology.cores.at(-1)!.cpus], front: topology.cores.slice(0, -1).flatMap((c) => c.cpus), before: await allowedCpus(process.pid) };
}

interface Timing {
  ttftMs: number;
  decodeTokensPerSecond: number;
  /** For the HTTP path: the engine's own time to the first token (its queue wait, then the prefill), so the rest is the front's. */
  engineTtftMs?: number;
  /** For the HTTP path: the decode rate the engine child measured itself, so the rest of the loss is on the way out. */
  engineDecodeTokensPerSecond?: number;
  /** For the HTTP path: the front's own share of TTFT, as the server measured it. */
  frontMs?: number;
  /** For the HTTP path: SSE events that carried tokens. */
  events?: number;
}

/** An OpenAI-style completions endpoint that streams one event and its end (with the usage) at once, whatever it is asked. */
async function startHttpFloor(): Promise<ClientTarget & { server: Server }> {
  const event = (choice: object, extra = {}): string =>
    `data: ${JSON.stringify({ id: 'cmpl-floor', object: 'text_completion', created: 0, model: 'floor', choices: [choice], ...extra })}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(event({ index: 0, text: 'a', finish_reason: null, logprobs: null }));
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      res.end(`${event({ index: 0, text: '', finish_reason: 'length', logprobs: null }, { usage })}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseURL: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, model: 'floor' };
}

export async function runOverhead(options: OverheadOptions) {
  const prompt = Array.from({ length: options.promptTokens }, (_, i) => 300 + ((i * 13) % 300));
  const clients = new Map<string, OpenAI>();
  /** Runs so far, over all starts: each run's prompt starts with a token of its own. */
  let longRuns = 0;
  let shortRounds = 0;
  /** One stream through `target`, greedy as the in-process path. */
  const overHttp = async (target: ClientTarget, tokens = prompt, answerTokens = options.answerTokens): Promise<Timing> => {
    const client = clients.get(target.baseURL) ?? new OpenAI({ baseURL: target.baseURL, apiKey: 'bench', maxRetries: 0 });
    clients.set(target.baseURL, client);
    const result = await streamRequest(client, target.model, { kind: 'completion', prompt: tokens }, answerTokens, 1, { temperature: 0 });
    if (result.error !== null) throw new Error(`${target.baseURL} failed a request: ${result.error}`);
    return {
      ttftMs: result.ttftMs,
      decodeTokensPerSecond: result.decodeTokensPerSecond,
      events: result.events,
      engineTtftMs: result.serverTtftMs,
      engineDecodeTokensPerSecond: result.serverDecodeTokensPerSecond,
      frontMs: result.frontMs,
    };
  };
  const overBareHttp = (to: ClientTarget, tokens: number[]): Promise<BareFirstToken> => bareFirstToken(to.baseURL, to.model, tokens, TTFT_ANSWER_TOKENS);

  /**
   * The runs of one start of one placement: a fresh replica and a fresh plain node-llama-cpp process (both
   * on the engine's CPUs in `own core`), HTTP and in-process alternating, and the floor after each pair.
   */
  const measureStart = async (cpus: CoreSplit | null, floor: ClientTarget, longPairs: number, shortPairs: number, into: Runs) => {
    const plain = await startPlainProcess({ model: options.model, threads: options.threads, contextSize: options.contextSize });
    const inProcess = (tokens = prompt, answerTokens = options.answerTokens): Promise<Timing> => plain.stream(tokens, answerTokens);
    try {
      if (cpus) await pinProcess(plain.pid, cpus.engine);
      await withServed(
        // The prefix cache off: each run's fresh prompt would save the previous run's state first (a few ms of
        // engine work the in-process path does not do); the front's cost is what this compares. Manifold sizes an
        // engine's thread pool for the CPUs it pins it to before the spawn (engine-child-env.ts); `own core` pins
        // after it, so it gives the child the size that rule gives a child on the engine's CPUs.
        {
          model: options.model,
          replicas: 1,
          env: cpus ? { UV_THREADPOOL_SIZE: String(engineThreadpoolSize(1, cpus.engine.length)) } : {},
          engine: { slots: 1, threads: options.threads, contextSize: options.contextSize, prefixCache: PREFIX_CACHE_OFF },
        },
        async (target, served) => {
          const child = served.workstation.replicas.replicaView()[0]?.pid;
          if (cpus) {
            if (!child) throw new Error('overhead (own core): the replica has no engine process to pin');
            await pinProcess(child, cpus.engine);
          }
          // The slot holds the prompt after a run; a different first token makes every run a cold prefill.
          const front = (): Promise<Timing> => overHttp(target);
          prompt[0] = 300;
          await front();
          await inProcess();
          await overHttp(floor);
          const startHttp: Timing[] = [];
          const startLocal: Timing[] = [];
          for (let i = 0; i < longPairs; i++, longRuns++) {
            // Never the first token of the warm-up prompt (300), so no run starts on a cached prefix.
            prompt[0] = 301 + (longRuns % 19);
            await inTurn(i, [async () => void startHttp.push(await front()), async () => void startLocal.push(await inProcess())]);
            into.floor.push(await overHttp(floor));
          }
          into.http.push(...startHttp);
          into.local.push(...startLocal);
          into.pairedDecodeByStart.push(pairedDecodeRatio(startHttp, startLocal));
          const shortPrompt = prompt.slice(0, options.shortPromptTokens);
          for (let i = 0; i < shortPairs; i++, shortRounds++) {
            // A first token of its own each run and path (the long runs used 300–319), so no run starts on a
            // prefix cached by the one before it.
            shortPrompt[0] = 320 + 2 * (shortRounds % 140);
            const bareShortPrompt = [shortPrompt[0] + 1, ...shortPrompt.slice(1)];
            await inTurn(i, [
              async () => void into.shortHttp.push(await overHttp(target, shortPrompt, TTFT_ANSWER_TOKENS)),
              async () => void into.shortLocal.push(await inProcess(shortPrompt, TTFT_ANSWER_TOKENS)),
              async () => void into.shortBare.push(await overBareHttp(target, bareShortPrompt)),
              async () => void into.shortBareFloor.push(await overBareHttp(floor, shortPrompt)),
            ]);
          }
        },
      );
    } finally {
      await plain.close();
    }
  };

  if (options.runs < options.starts) throw new Error(`overhead: ${options.runs} runs cannot be split between ${options.starts} starts`);
  /** Every start of one placement, the runs split evenly between them. */
  const measure = async (cpus: CoreSplit | null, floor: ClientTarget): Promise<Runs> => {
    const runs: Runs = { http: [], local: [], floor: [], shortHttp: [], shortLocal: [], shortBare: [], shortBareFloor: [], pairedDecodeByStart: [] };
    if (cpus) await pinProcess(process.pid, cpus.front);
    try {
      for (let start = 0; start < options.starts; start++) {
        const share = (total: number) => Math.floor(total / options.starts) + (start < total % options.starts ? 1 : 0);
        await measureStart(cpus, floor, share(options.runs), share(options.ttftRuns), runs);
      }
    } finally {
      if (cpus) await pinProcess(process.pid, cpus.before);
    }
    return runs;
  };

  const placements = [];
  const skipped: string[] = [];
  // One floor server for the whole run: it answers at once whatever the placement and the start.
  const floor = await startHttpFloor();
  try {
    for (const placement of options.placements) {
      const cpus = placement === 'own core' ? await ownCorePlacement() : null;
      if (cpus && 'reason' in cpus) {
        skipped.push(`${placement}: skipped (${cpus.reason})`);
        continue;
      }
      const runs = await measure(cpus, floor);
      placements.push({ placement, cpus, runs, summary: summarise(runs, options.answerTokens) });
    }
  } finally {
    await new Promise((resolve) => floor.server.close(resolve));
  }

  const text = placements
    .map(({ placement, cpus, summary }) => {
      const where = cpus ? `the engine on CPU ${cpus.engine.join(',')}, the front and the client on ${cpus.front.join(',')}` : 'every core shared';
      return `${placement} (${where}):\n${summaryTable(summary)}\n\n${verdict(summary)}\n\n${shortPromptTable(summary.shortPrompt, options.shortPromptTokens, summary.httpFloorTtftP50Ms)}`;
    })
    .concat(skipped)
    .join('\n\n');
  return { config: { ...options, model: undefined }, placements, text };
}

type Runs = {
  http: Timing[];
  local: Timing[];
  floor: Timing[];
  shortHttp: Timing[];
  shortLocal: Timing[];
  shortBare: BareFirstToken[];
  shortBareFloor: BareFirstToken[];
  /** Each start's median paired decode ratio (HTTP over the in-process run beside it). */
  pairedDecodeByStart: number[];
};

/** Each HTTP run's decode rate over the in-process run beside it. */
const decodePairs = (http: readonly Timing[], local: readonly Timing[]): number[] =>
  http.map((x, i) => x.decodeTokensPerSecond / local[i]!.decodeTokensPerSecond);

/** The median over pairs of each HTTP run's decode rate over the in-process run beside it. */
const pairedDecodeRatio = (http: readonly Timing[], local: readonly Timing[]): number => percentile(decodePairs(http, local), 50);

/** What a run on the short prompt generates: its TTFT is all it is for. */
const TTFT_ANSWER_TOKENS = 2;

/** Runs the runs of round `round`, the first of them rotating from round to round, so none always runs on another's warm caches. */
async function inTurn(round: number, runs: (() => Promise<void>)[]): Promise<void> {
  for (let k = 0; k < runs.length; k++) await runs[(k + round) % runs.length]!();
}

function summarise(results: Runs, answerTokens: number) {
  const p50 = (xs: Timing[], k: 'ttftMs' | 'decodeTokensPerSecond') =>
    percentile(
      xs.map((x) => x[k]),
      50,
    );
  const httpTtftP50Ms = p50(results.http, 'ttftMs');
  const inProcessTtftP50Ms = p50(results.local, 'ttftMs');
  const httpDecodeTokensPerSecond = mean(results.http.map((x) => x.decodeTokensPerSecond));
  const inProcessDecodeTokensPerSecond = mean(results.local.map((x) => x.decodeTokensPerSecond));
  const pairs = decodePairs(results.http, results.local);
  return {
    httpTtftP50Ms,
    httpEngineTtftP50Ms: percentile(
      results.http.map((x) => x.engineTtftMs ?? Number.NaN),
      50,
    ),
    inProcessTtftP50Ms,
    ttftDeltaMs: httpTtftP50Ms - inProcessTtftP50Ms,
    httpDecodeTokensPerSecond,
    httpEngineDecodeTokensPerSecond: mean(results.http.map((x) => x.engineDecodeTokensPerSecond ?? Number.NaN)),
    inProcessDecodeTokensPerSecond,
    decodeRatio: httpDecodeTokensPerSecond / inProcessDecodeTokensPerSecond,
    /** The median over runs of each HTTP run's decode rate over the in-process run beside it. */
    pairedDecodeRatio: percentile(pairs, 50),
    /** A 90% bootstrap interval for that median: how far the same number of pairs could have put it. */
    pairedDecodeInterval: bootstrapMedian(pairs),
    /** The same, start by start: how far one start's engine process and context set the ratio apart from another's. */
    pairedDecodeByStart: results.pairedDecodeByStart,
    /** What each token costs the HTTP path beyond the in-process one, in µs: what a faster engine would lose the same of. */
    extraMicrosecondsPerToken: 1e6 / httpDecodeTokensPerSecond - 1e6 / inProcessDecodeTokensPerSecond,
    httpFloorTtftP50Ms: p50(results.floor, 'ttftMs'),
    frontP50Ms: percentile(
      results.http.map((x) => x.frontMs ?? Number.NaN),
      50,
    ),
    tokensPerEvent: (answerTokens * results.http.length) / results.http.reduce((sum, x) => sum + (x.events ?? 0), 0),
    shortPrompt: summariseShortPrompt(results),
  };
}

/** TTFT on the short prompt: each path's p50, the engine child's own, and the front's as the server reports it. */
function summariseShortPrompt(results: Runs) {
  const p50 = (values: number[]) => percentile(values, 50);
  const inProcessTtftP50Ms = p50(results.shortLocal.map((x) => x.ttftMs));
  const httpTtftP50Ms = p50(results.shortHttp.map((x) => x.ttftMs));
  const engineTtftP50Ms = p50(results.shortHttp.map((x) => x.engineTtftMs ?? Number.NaN));
  const bareTtftP50Ms = p50(results.shortBare.map((x) => x.ttftMs));
  // The bare client's TTFT over the in-process run of the same round: what is left of the machine's moment after the pairing.
  const barePairedDeltasMs = results.shortBare.map((x, i) => x.ttftMs - results.shortLocal[i]!.ttftMs);
  return {
    runs: results.shortHttp.length,
    inProcessTtftP50Ms,
    httpTtftP50Ms,
    ttftDeltaMs: httpTtftP50Ms - inProcessTtftP50Ms,
    engineTtftP50Ms,
    /** The engine child's time to its first token over the in-process path's: its share of the delta. */
    engineDeltaMs: engineTtftP50Ms - inProcessTtftP50Ms,
    /** The client's TTFT over the engine child's, run by run: the front, both IPC hops and the client's HTTP. */
    outsideEngineP50Ms: p50(results.shortHttp.map((x) => x.ttftMs - (x.engineTtftMs ?? Number.NaN))),
    frontP50Ms: p50(results.shortHttp.map((x) => x.frontMs ?? Number.NaN)),
    bareTtftP50Ms,
    bareDeltaMs: bareTtftP50Ms - inProcessTtftP50Ms,
    /** The median of the bare client's TTFT over the in-process run of the same round, and its 90% bootstrap interval. */
    barePairedDeltaMs: p50(barePairedDeltasMs),
    barePairedDeltaInterval: bootstrapMedian(barePairedDeltasMs),
    /** The bare client's TTFT over the engine child's, run by run: the front, both IPC hops and HTTP, without the engine process's own spread. */
    bareOutsideEngineP50Ms: p50(results.shortBare.map((x) => x.ttftMs - (x.serverTtftMs ?? Number.NaN))),
    bareFloorP50Ms: p50(results.shortBareFloor.map((x) => x.ttftMs)),
  };
}

function summaryTable(summary: ReturnType<typeof summarise>): string {
  return table(
    ['path', 'TTFT p50 ms', 'decode tok/s', 'decode % of in-process'],
    [
      ['in-process node-llama-cpp', summary.inProcessTtftP50Ms, summary.inProcessDecodeTokensPerSecond, 100],
      ['HTTP front (SSE, openai)', summary.httpTtftP50Ms, summary.httpDecodeTokensPerSecond, summary.decodeRatio * 100],
      [
        '  in the engine child',
        summary.httpEngineTtftP50Ms,
        summary.httpEngineDecodeTokensPerSecond,
        (summary.httpEngineDecodeTokensPerSecond / summary.inProcessDecodeTokensPerSecond) * 100,
      ],
      ["  of which the front's own (front_ms)", summary.frontP50Ms, NaN, NaN],
      ['HTTP floor (a server answering at once)', summary.httpFloorTtftP50Ms, NaN, NaN],
    ],
  );
}

function shortPromptTable(short: ReturnType<typeof summariseShortPrompt>, promptTokens: number, floorMs: number): string {
  return table(
    [`TTFT on a ${promptTokens}-token prompt (${short.runs} runs)`, 'p50 ms', 'over in-process ms'],
    [
      ['in-process node-llama-cpp', short.inProcessTtftP50Ms, 0],
      ['HTTP front (SSE, openai)', short.httpTtftP50Ms, short.ttftDeltaMs],
      ['  in the engine child', short.engineTtftP50Ms, short.engineDeltaMs],
      ['  the rest: front, IPC, HTTP (run by run)', short.outsideEngineP50Ms, NaN],
      ["  of which the front's own (front_ms)", short.frontP50Ms, NaN],
      ['HTTP floor (a server answering at once)', floorMs, NaN],
      ['HTTP front, a bare node:http client', short.bareTtftP50Ms, short.bareDeltaMs],
      [
        '  round by round (median, 90% interval)',
        NaN,
        `${signed(short.barePairedDeltaMs)} (${signed(short.barePairedDeltaInterval.low)} to ${signed(short.barePairedDeltaInterval.high)})`,
      ],
      ['  the rest: front, IPC, HTTP (run by run)', short.bareOutsideEngineP50Ms, NaN],
      ['HTTP floor, a bare node:http client', short.bareFloorP50Ms, NaN],
    ],
  );
}

function verdict(summary: ReturnType<typeof summarise>): string {
  return [
    `decode ${(summary.decodeRatio * 100).toFixed(1)}% of in-process (run by run: ${(summary.pairedDecodeRatio * 100).toFixed(1)}%, 90% interval ${(summary.pairedDecodeInterval.low * 100).toFixed(1)}–${(summary.pairedDecodeInterval.high * 100).toFixed(1)}%, start by start: ${summary.pairedDecodeByStart.map((r) => `${(r * 100).toFixed(1)}%`).join(', ')}; target ≥ 98%), ${summary.extraMicrosecondsPerToken.toFixed(0)} µs more a token`,
    `TTFT delta ${signed(summary.ttftDeltaMs)} ms (target ≤ +2 ms; on the short prompt ${signed(summary.shortPrompt.ttftDeltaMs)} ms, of which the engine child's own ${signed(summary.shortPrompt.engineDeltaMs)} ms; with a bare node:http client ${signed(summary.shortPrompt.bareDeltaMs)} ms, round by round ${signed(summary.shortPrompt.barePairedDeltaMs)} ms (90% interval ${signed(summary.shortPrompt.barePairedDeltaInterval.low)} to ${signed(summary.shortPrompt.barePairedDeltaInterval.high)}), of which outside the engine child ${summary.shortPrompt.bareOutsideEngineP50Ms.toFixed(2)} ms, its floor ${summary.shortPrompt.bareFloorP50Ms.toFixed(2)} ms)`,
    `front_ms p50 ${summary.frontP50Ms.toFixed(2)} ms`,
    `the HTTP floor ${summary.httpFloorTtftP50Ms.toFixed(2)} ms`,
    `${summary.tokensPerEvent.toFixed(2)} tokens per SSE event`,
  ].join(', ');
}

const signed = (ms: number): string => `${ms >= 0 ? '+' : ''}${ms.toFixed(2)}`;
