/**
 * Seeded synthetic chat workloads driven through the real HTTP front with the official `openai` client:
 * - multi-turn: N users × K turns over a shared system prompt, each turn adding the answer and a new
 *   user message to the history (kept as tokens, see multiTurn), a fixed answer length, at most `concurrency` requests in flight;
 * - shared-prefix (in the style of SGLang's generated-shared-prefix): G groups × P prompts, each group
 *   with its own long common prefix.
 * Each request records TTFT, decode rate, prompt and cached tokens.
 */
import OpenAI from 'openai';
import type { Tokenizer } from '../core/tokenizer.js';
import { mean, percentile, seeded } from './stats.js';

export interface RequestResult {
  ttftMs: number;
  decodeTokensPerSecond: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  replica: number | null;
  /** Replicas that died under it before its first token (the `manifold.failed_over` field). */
  failedOver: number[];
  error: string | null;
  /**
   * What the server itself reports in the finishing chunk (llama-server's `timings`, Manifold's
   * `manifold.timings`): its time to the first token (queue wait included) and its decode rate; the rest
   * of the client's figures is the HTTP front's share. Undefined when the server reports none.
   */
  serverTtftMs?: number;
  serverDecodeTokensPerSecond?: number;
  /** Manifold's own share of the TTFT, as it reports it (`timings.front_ms`). */
  frontMs?: number;
  /** Multi-turn only: whose turn it was. */
  user?: number;
  turn?: number;
}

const WORDS =
  'the of and to in is was for on that with as by at from it an were are which this be or has had not first one their its new after but who they have her she two been other when there all during into school time may years more most only over city some world would where later up such used many can state about national out known university united then made system user assistant hello model token replica slot cache prefix engine route question answer please thank you what how why write code function return value number list file data test'.split(
    ' ',
  );

/** `words` seeded random words from a small English list (each one token or a few in the test model's vocabulary). */
export function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(' ');
}

export interface ClientTarget {
  baseURL: string;
  model: string;
  /** A server whose chat stream gives no token ids (llama-server): chat requests ask for logprobs, which name the sampled ids. */
  logprobIds?: boolean;
}

/** The `timings` names llama-server reports (Manifold adds its engine queue wait as `queued_ms`, and its own share of TTFT as `front_ms`). */
interface ServerTimings {
  queued_ms?: number;
  prompt_ms: number;
  predicted_per_second: number;
  front_ms?: number | null;
}

type StreamBody = { kind: 'chat'; messages: OpenAI.ChatCompletionMessageParam[] } | { kind: 'completion'; prompt: number[] };

/** Fresh prompts (token ids of ordinary pieces), each different from its first token, so none reuses a cached prefix. */
export function freshPrompts(count: number, length: number, random: () => number): number[][] {
  return Array.from({ length: count }, () => Array.from({ length }, () => 300 + Math.floor(random() * 300)));
}

export interface StreamOptions {
  /** For a server whose chat stream gives no token ids: ask for logprobs, which name the sampled ids. */
  askLogprobIds?: boolean;
  /** The sampling temperature (0.7 unless given; 0 where an in-process greedy run is the baseline). */
  temperature?: number;
}

/**
 * One streamed request; TTFT is the first token chunk (every token has one; the chat role chunk does not
 * count), and `events` the chunks that carried text.
 */
export async function streamRequest(
  client: OpenAI,
  model: string,
  body: StreamBody,
  answerTokens: number,
  seed: number,
  { askLogprobIds = false, temperature = 0.7 }: StreamOptions = {},
): Promise<RequestResult & { text: string; tokens: number[]; events: number }> {
  const started = performance.now();
  let firstAt = 0;
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined;
  let replica: number | null = null;
  let failedOver: number[] = [];
  let tokens: number[] = [];
  let serverTimings: ServerTimings | undefined;
  let events = 0;
  const common = {
    model,
    max_tokens: answerTokens,
    temperature,
    seed,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: true,
    return_tokens: true,
  };
  // llama-server's chat stream gives no token ids but its logprobs name the sampled one (Manifold gives `manifold.tokens`).
  const sampledIds = body.kind === 'chat' && askLogprobIds ? { logprobs: true, top_logprobs: 1 } : {};
  const logprobIds: number[] = [];
  const open = () =>
    body.kind === 'chat'
      ? client.chat.completions.create({ ...common, ...sampledIds, messages: body.messages } as OpenAI.ChatCompletionCreateParamsStreaming)
      : client.completions.create({ ...common, prompt: body.prompt } as OpenAI.CompletionCreateParamsStreaming);
  try {
    let stream: Awaited<ReturnType<typeof open>>;
    // A request that never reached the server is sent again, as chat clients do: llama-server (cpp-httplib)
    // closes kept-alive connections the client may be reusing ("other side closed"). TTFT counts the retries.
    for (let attempt = 1; ; attempt++) {
      try {
        stream = await open();
        break;
      } catch (error) {
        if (!(error instanceof OpenAI.APIConnectionError) || error instanceof OpenAI.APIConnectionTimeoutError || attempt >= 3) throw error;
      }
    }
    for await (const chunk of stream as AsyncIterable<OpenAI.ChatCompletionChunk | OpenAI.Completion>) {
      const choice = chunk.choices[0] as
        | { delta?: { content?: string | null }; text?: string; finish_reason: string | null; logprobs?: { content?: { id?: number }[] | null } | null }
        | undefined;
      for (const sampled of choice?.logprobs?.content ?? []) if (sampled.id !== undefined) logprobIds.push(sampled.id);
      const piece = choice ? (choice.delta ? choice.delta.content : choice.text) : undefined;
      if (typeof piece === 'string' && choice!.finish_reason === null) {
        firstAt ||= performance.now();
        events++;
      }
      if (piece) text += piece;
      if (chunk.usage) usage = chunk.usage;
      // Token chunks carry their own ids (`manifold.tokens`); the finishing chunk says who served it and all the ids.
      const extra = chunk as unknown as {
        manifold?: { replica?: number; failed_over?: number[]; tokens?: number[]; timings?: ServerTimings };
        timings?: ServerTimings;
      };
      const served = extra.manifold;
      if (served?.replica !== undefined) {
        replica = served.replica;
        failedOver = served.failed_over ?? [];
        tokens = served.tokens ?? [];
      }
      serverTimings = served?.timings ?? extra.timings ?? serverTimings;
    }
    if (!tokens.length) tokens = logprobIds;
    const ended = performance.now();
    const completionTokens = usage?.completion_tokens ?? 0;
    return {
      text,
      tokens,
      events,
      ttftMs: (firstAt || ended) - started,
      decodeTokensPerSecond: firstAt && ended > firstAt ? ((completionTokens - 1) * 1000) / (ended - firstAt) : 0,
      promptTokens: usage?.prompt_tokens ?? 0,
      cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
      completionTokens,
      replica,
      failedOver,
      error: usage ? null : 'no usage in the stream',
      ...(serverTimings
        ? { serverTtftMs: (serverTimings.queued_ms ?? 0) + serverTimings.prompt_ms, serverDecodeTokensPerSecond: serverTimings.predicted_per_second }
        : {}),
      ...(typeof serverTimings?.front_ms === 'number' ? { frontMs: serverTimings.front_ms } : {}),
    };
  } catch (error) {
    return {
      text,
      tokens,
      events,
      ttftMs: 0,
      decodeTokensPerSecond: 0,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
      replica,
      failedOver,
      error: withCause(error),
    };
  }
}

/** An error's message and its causes' (the `openai` client's "Connection error." says why only in its cause). */
function withCause(error: unknown): string {
  const messages: string[] = [];
  for (let e = error as { message?: string; cause?: unknown } | undefined; e && messages.length < 4; e = e.cause as typeof e)
    messages.push(e.message ?? String(e));
  return messages.join(': ');
}

type Task = () => Promise<void>;

/**
 * Runs the tasks of `queue` with at most `concurrency` in flight. A running task may add to the queue
 * (a user's next turn), so a worker that finds it empty waits until no task is running. `take` picks
 * which waiting task goes next (the oldest unless told otherwise).
 */
async function runPool(concurrency: number, queue: Task[], take: (waiting: Task[]) => Task = (waiting) => waiting.shift()!): Promise<void> {
  let running = 0;
  const workers = Array.from({ length: concurrency }, async () => {
    for (;;) {
      if (queue.length) {
        const task = take(queue);
        running++;
        try {
          await task();
        } finally {
          running--;
        }
        continue;
      }
      if (running === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
  await Promise.all(workers);
}

export interface MultiTurnOptions {
  users: number;
  turns: number;
  systemWords: number;
  userWords: number;
  answerTokens: number;
  concurrency: number;
  seed: number;
}

/**
 * The conversation is kept as tokens (system + turns, the model's own answer tokens included) and sent to
 * /v1/completions as token ids, as a chat client whose history re-tokenizes to what the model produced
 * would. With the random-weight test model, sending the answers back as text would not: its noise
 * (broken UTF-8, unusual splits) re-tokenizes differently, and every turn would miss from the answer on.
 */
export async function multiTurn(target: ClientTarget, options: MultiTurnOptions, tokenizer: Tokenizer): Promise<{ results: RequestResult[]; wallMs: number }> {
  const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench', maxRetries: 0 });
  const random = seeded(options.seed);
  const system = sentence(random, options.systemWords);
  const results: RequestResult[] = [];
  const started = performance.now();
  // Each user's next turn is queued when its previous turn ends, so a user's turns stay in order.
  const queue: Task[] = [];
  const userTurn = (user: number, turn: number, history: number[]) => async () => {
    const message = sentence(random, options.userWords);
    const prompt =
      turn === 0
        ? (
            await tokenizer.applyChatTemplate([
              { role: 'system', content: system },
              { role: 'user', content: message },
            ])
          ).tokens
        : [...history, ...(await tokenizer.tokenize(`<|im_end|>\n<|im_start|>user\n${message}<|im_end|>\n<|im_start|>assistant\n`, { special: true }))];
    const result = await streamRequest(client, target.model, { kind: 'completion', prompt }, options.answerTokens, options.seed * 1000 + user * 10 + turn);
    results.push({ ...result, user, turn });
    if (turn + 1 < options.turns) queue.push(userTurn(user, turn + 1, [...prompt, ...result.tokens]));
  };
  for (let u = 0; u < options.users; u++) queue.push(userTurn(u, 0, []));
  // Users answer at seeded random moments: a free worker takes any waiting turn, not the oldest.
  await runPool(options.concurrency, queue, (waiting) => waiting.splice(Math.floor(random() * waiting.length), 1)[0]!);
  return { results, wallMs: performance.now() - started };
}

export interface SharedPrefixOptions {
  groups: number;
  promptsPerGroup: number;
  prefixWords: number;
  questionWords: number;
  answerTokens: number;
  concurrency: number;
  seed: number;
}

export async function sharedPrefix(target: ClientTarget, options: SharedPrefixOptions): Promise<{ results: RequestResult[]; wallMs: number }> {
  const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench', maxRetries: 0 });
  const random = seeded(options.seed);
  const prefixes = Array.from({ length: options.groups }, () => sentence(random, options.prefixWords));
  const tasks: Task[] = [];
  const results: RequestResult[] = [];
  // Prompts arrive in a seeded random order across groups, as independent clients would send them
  // (a fixed interleaving would let round-robin land each group on the same replica by accident).
  const order = Array.from({ length: options.groups * options.promptsPerGroup }, (_, i) => ({
    g: i % options.groups,
    p: Math.floor(i / options.groups),
    key: random(),
  }));
  order.sort((a, b) => a.key - b.key);
  for (const { g, p } of order) {
    {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'system', content: prefixes[g]! },
        { role: 'user', content: sentence(random, options.questionWords) },
      ];
      tasks.push(async () => {
        results.push(await streamRequest(client, target.model, { kind: 'chat', messages }, options.answerTokens, options.seed + g * 100 + p));
      });
    }
  }
  const started = performance.now();
  await runPool(options.concurrency, tasks);
  return { results, wallMs: performance.now() - started };
}

/** The figures the issue asks for, from one run's requests. */
export function summarise(results: readonly RequestResult[], wallMs: number) {
  const ok = results.filter((r) => r.error === null);
  const ttftsMs = ok.map((r) => r.ttftMs);
  const prompt = ok.reduce((s, r) => s + r.promptTokens, 0);
  const cached = ok.reduce((s, r) => s + r.cachedTokens, 0);
  const completion = ok.reduce((s, r) => s + r.completionTokens, 0);
  // Share of later turns served by the replica that served the conversation's previous turn.
  const previous = new Map<string, number | null>();
  let later = 0;
  let stayed = 0;
  for (const r of [...results].sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0))) {
    if (r.user === undefined) continue;
    const key = String(r.user);
    if (previous.has(key)) {
      later++;
      if (previous.get(key) === r.replica) stayed++;
    }
    previous.set(key, r.replica);
  }
  return {
    requests: results.length,
    stickiness: later ? stayed / later : NaN,
    errors: results.length - ok.length,
    cacheHitRate: prompt ? cached / prompt : 0,
    ttftP50Ms: percentile(ttftsMs, 50),
    ttftP90Ms: percentile(ttftsMs, 90),
    ttftP99Ms: percentile(ttftsMs, 99),
    /** Every answered request's TTFT: what a ratio's bootstrap interval draws from. */
    ttftsMs,
    decodeTokensPerSecond: mean(ok.map((r) => r.decodeTokensPerSecond)),
    completionTokensPerSecond: (completion * 1000) / wallMs,
    totalTokensPerSecond: ((prompt + completion) * 1000) / wallMs,
    requestsPerSecond: (ok.length * 1000) / wallMs,
    wallMs,
  };
}
