/**
 * The run config (DESIGN §3): which cards, how many replicas or which named groups (local engines or
 * remote servers), the model and the engine options, and how they resolve into one plan per replica
 * (cards, env, engine options, threads, log file; a remote's URL, kind and timeouts). Every rule that
 * can be broken has an error that names the field and the value and says how to fix it.
 */
import { z } from 'zod';
import { routePolicy, routePolicyNames } from '../router/policies.js';
import { flashAttentionSchema } from '../../common/engine-protocol.js';
import { expectedOneOf, firstIssueInWords, inWords, valueInWords } from '../../common/issue-words.js';
import { prefixCacheBudgetsSchema } from '../../common/prefix-cache.js';
import { kvTypeSchema } from '../../common/rebuild.js';
import { DEFAULT_REMOTE_TIMEOUTS, REMOTE_KINDS, type RemotePlan } from './remote-plan.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Engine options a config may set for all replicas and override per replica. */
const engineOptionsSchema = z
  .object({
    gpuLayers: z.union([z.literal('auto'), z.number().int().nonnegative()]),
    contextSize: z.number().int().min(64),
    slots: z.number().int().min(1).max(256),
    threads: z.number().int().nonnegative(),
    flashAttention: flashAttentionSchema,
    kvType: kvTypeSchema,
    batchSize: z.number().int().min(1),
    /** Byte budgets of the tiered prefix cache of evicted conversations, per engine (0 turns a tier off). */
    prefixCache: prefixCacheBudgetsSchema,
  })
  .partial()
  .strict();
export type EngineOptions = z.infer<typeof engineOptionsSchema>;

/**
 * What runs a local replica: the name of an engine kind (engine-kinds/engine-kinds.ts lists them and refuses
 * a name it does not know when the replicas are made). A config without `engine.kind` runs the machine's
 * default (MachineFacts.defaultEngineKind: engine-kinds/default-engine-kind.ts).
 */
export type EngineKind = string;

/** The config's `engine`: the options every local replica starts from, and the kind of engine all of them run. */
const baseEngineSchema = engineOptionsSchema.extend({
  kind: z
    .string({ error: (issue) => `${valueInWords(issue.input)} is not an engine kind's name` })
    .regex(/^[a-z][a-z0-9-]*$/, { error: (issue) => `${valueInWords(issue.input)} is not an engine kind's name` })
    .optional(),
});

const envSchema = z.record(z.string(), z.string());
/** A card list, `[0, 1]` or the same as a string `"0,1"`; the cards themselves are checked when planning, in words. */
const cardListSchema = (shapes: string) => z.union([z.string(), z.array(z.unknown())], { error: expectedOneOf(shapes) });

/** `http://GPU-box:80/` → `http://gpu-box`; null for anything that is not an http(s) base URL. */
function normalizedUrl(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.search || url.hash || url.username || url.password) return null;
  return url.href.replace(/\/+$/, '');
}

const serverUrlSchema = z.string().transform((text, ctx) => {
  const url = normalizedUrl(text);
  if (url !== null) return url;
  ctx.addIssue({
    code: 'custom',
    message: `${valueInWords(text)} is not an http(s) server address; write it as "http://gpu-box-2:8080" or "https://gpu-box-2" (no query, fragment or user: the key goes in "apiKey")`,
  });
  return z.NEVER;
});

const REMOTE_ONLY_FIELDS = ['kind', 'apiKey', 'slots', 'model', 'timeouts'] as const;
const LOCAL_ONLY_FIELDS = ['gpus', 'env', 'args'] as const;
const MAX_REMOTE_SLOTS = 4096;
const timeoutMsSchema = z.number().int().min(1).max(3_600_000);

/**
 * One entry of `"replicas": [...]`: a local group `{gpus?, env?, args?}` or, with a `url`, a remote
 * server `{url, kind?, apiKey?, slots?, model?, timeouts?}`. One object for both, so a field of the
 * other kind gets its own message rather than "unknown field".
 */
const replicaEntrySchema = z
  .object({
    gpus: cardListSchema('a card list such as [0, 1] or "0,1"').optional(),
    env: envSchema.optional(),
    args: engineOptionsSchema.optional(),
    /** Normalized by the parse: lower-case scheme and host, no default port, no trailing slash. */
    url: serverUrlSchema.optional(),
    kind: z
      .enum([...REMOTE_KINDS, 'auto'], {
        error: (issue) =>
          `${valueInWords(issue.input)} is not a kind of server; use "llama-server", "manifold", "openai" (vLLM, SGLang, Ollama and other OpenAI-compatible servers) or "auto" to ask the server`,
      })
      .optional(),
    apiKey: z.string().min(1).optional(),
    slots: z
      .number()
      .int()
      .min(1, {
        error: (issue) => `${valueInWords(issue.input)} slots cannot serve anything; use 1 or more, or leave "slots" out to take what the server reports`,
      })
      .max(MAX_REMOTE_SLOTS)
      .optional(),
    model: z.string().min(1).optional(),
    timeouts: z.object({ connectMs: timeoutMsSchema, firstTokenMs: timeoutMsSchema, idleMs: timeoutMsSchema }).partial().strict().optional(),
  })
  .strict()
  .superRefine((entry, ctx) => {
    const misplaced = (field: (typeof REMOTE_ONLY_FIELDS)[number] | (typeof LOCAL_ONLY_FIELDS)[number], message: string): void => {
      if (entry[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message });
    };
    if (entry.url === undefined) {
      for (const field of REMOTE_ONLY_FIELDS) {
        misplaced(
          field,
          `"${field}" is for a remote replica and this entry has no "url"; add the server's "url" (e.g. "http://gpu-box-2:8080"), or remove "${field}"`,
        );
      }
    } else {
      for (const field of LOCAL_ONLY_FIELDS) {
        misplaced(
          field,
          `"${field}" is for a local engine and means nothing for a remote replica ("url": "${entry.url}"), which runs on its own machine; remove "${field}", or remove "url" for a local group`,
        );
      }
    }
  });
type ReplicaEntry = z.infer<typeof replicaEntrySchema>;

/** The replicas list: its entries, each server once. */
const replicaEntriesSchema = z.array(replicaEntrySchema).superRefine((entries, ctx) => {
  const first = new Map<string, number>();
  entries.forEach(({ url }, index) => {
    if (url === undefined) return;
    const earlier = first.get(url);
    if (earlier === undefined) first.set(url, index);
    else
      ctx.addIssue({
        code: 'custom',
        path: [index, 'url'],
        message: `"${url}" is already replicas[${earlier}]; list each server once (its "slots" say how many requests it takes at a time)`,
      });
  });
});

/** `"replicas": true` and its kin: what a replicas value may be, with examples. */
function replicasShapeError(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_union') return undefined;
  const value = issue.input;
  if (Array.isArray(value)) {
    // A list whose entries are all objects is reported by the entry that is wrong, not here.
    const index = value.findIndex((entry) => typeof entry !== 'object' || entry === null || Array.isArray(entry));
    return index < 0
      ? undefined
      : `entry ${index} is ${valueInWords(value[index])}, not a replica; each entry is a local group {"gpus": [0, 1]} or a remote server {"url": "http://gpu-box-2:8080"}`;
  }
  return (
    `${valueInWords(value)} is neither a replica count nor a list of groups; use a number ("replicas": 2), false for one engine, ` +
    `or a list ("replicas": [{"gpus": [0, 1]}, {"url": "http://host:8080"}])`
  );
}

/** A routing policy's name (router/policies.ts lists them). */
export type RoutingPolicy = string;

export const runConfigSchema = z
  .object({
    model: z.string().min(1),
    /** Other names the API answers to for the model (llama-server's `--alias`), besides its id, its file name and "default". */
    alias: z.array(z.string().min(1).max(256)).max(32).optional(),
    /** Card list (`[0, 1]` or `"0,1"`); "cpu" for CPU engines; absent: the detected cards. */
    gpu: cardListSchema('"cpu" or a card list such as [0, 1] or "0,1"').optional(),
    /** A count (≤ 1, false or [] is one engine) or the list of replicas, local groups and remote servers. */
    replicas: z.union([z.number().int(), z.literal(false), replicaEntriesSchema], { error: replicasShapeError }).optional(),
    engine: baseEngineSchema.optional(),
    env: envSchema.optional(),
    /** Base log file; replica i writes `<log>.r<i>`. */
    log: z.string().min(1).optional(),
    routing: z
      .string()
      .refine((name) => routePolicy(name) !== undefined, {
        error: (issue) =>
          `${valueInWords(issue.input)} is not a routing policy; use ${routePolicyNames()
            .map((n) => `"${n}"`)
            .join(', ')}`,
      })
      .optional(),
    /** Pin each replica to its own whole physical cores (Linux). */
    pinCores: z.boolean().optional(),
    /** Hold the weights in RAM once for every replica (DESIGN §6); off unless true. */
    shared_arena: z.boolean().optional(),
    /** On SIGTERM / Ctrl-C / the desktop's quit: how long running answers get to finish before they are cut. */
    shutdownGraceMs: z.number().int().min(0).max(600_000).optional(),
    heal: z
      .object({
        cooldownMs: z.number().int().nonnegative(),
        maxConsecutiveFailures: z.number().int().min(1),
      })
      .partial()
      .strict()
      .optional(),
    /** The core-held request queue: how many may wait, for how long, and how long a request may wait for the replica holding its prefix. */
    queue: z
      .object({
        maxWaiting: z.number().int().min(0).max(1_000_000),
        timeoutMs: z.number().int().min(1).max(86_400_000),
        cacheHoldMs: z.number().int().min(0).max(600_000),
      })
      .partial()
      .strict()
      .optional(),
  })
  .strict();
export type RunConfig = z.infer<typeof runConfigSchema>;

/** The grace period of a graceful stop when the config does not set `shutdownGraceMs`. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** What one replica runs on: a local engine (its cards, env and options) or a remote server (`remote`). */
export interface ReplicaPlan {
  /** Its position: in the count's order, or in the config's list. */
  readonly index: number;
  /** Cards this replica sees; empty for a CPU engine and for a remote. */
  readonly gpus: readonly number[];
  readonly cpu: boolean;
  /** Environment for the child: card visibility plus the config's env and the entry's env; empty for a remote. */
  readonly env: Readonly<Record<string, string>>;
  /** Empty for a remote. */
  readonly engine: EngineOptions;
  /** What runs a local replica (the config's `engine.kind`); null for a remote. */
  readonly engineKind: EngineKind | null;
  readonly logFile: string | null;
  /** The server a remote replica is; null for a local engine. */
  readonly remote: RemotePlan | null;
}

const VISIBILITY_VARIABLES = ['CUDA_VISIBLE_DEVICES', 'HIP_VISIBLE_DEVICES', 'GGML_VK_VISIBLE_DEVICES'] as const;

/** The env that lets a child see exactly `gpus` (none for a CPU engine). */
export function cardVisibilityEnv(gpus: readonly number[]): Record<string, string> {
  const value = gpus.join(',');
  return Object.fromEntries(VISIBILITY_VARIABLES.map((name) => [name, value]));
}

/**
 * The cards of a list, `[0, 1]` or `"0, 1"`: whole numbers, each once (`owner` names the replica in
 * that message). `field` names the list in the errors; an empty string is an empty list.
 */
function parseCards(cards: string | readonly unknown[], field: string, owner?: string): number[] {
  const fromString = typeof cards === 'string';
  const pieces: readonly unknown[] = fromString ? (cards.trim() === '' ? [] : cards.split(',').map((piece) => piece.trim())) : cards;
  const numbers = pieces.map((card) => {
    const value = fromString && /^\d+$/.test(card as string) ? Number(card) : card;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      const within = fromString && pieces.length > 1 ? ` in ${JSON.stringify(cards)}` : '';
      const cpuHint = field === 'gpu' ? ', or "cpu" for CPU engines' : '';
      throw new ConfigError(`${field}: card ${JSON.stringify(card)}${within} is not a card number (cards are whole numbers such as 0, 1, 2${cpuHint})`);
    }
    return value;
  });
  const twice = numbers.find((card, index) => numbers.indexOf(card) !== index);
  if (twice !== undefined) throw new ConfigError(`${field}: card ${twice} is listed twice${owner ? ` in ${owner}` : ''}; list each card once`);
  return numbers;
}

function divisorsOf(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
}

/** Parses a config object, naming the first field that is wrong. */
export function parseRunConfig(input: unknown): RunConfig {
  const parsed = runConfigSchema.safeParse(input, { error: inWords });
  if (!parsed.success) throw new ConfigError(`config ${firstIssueInWords(parsed.error, '(root)').message}`);
  return parsed.data;
}

export interface MachineFacts {
  /** Cards node-llama-cpp / NVML detected; empty on a machine without a GPU. */
  detectedGpus: readonly number[];
  /** Logical CPU cores, to share among CPU engines. */
  cpuCores: number;
  /** What a local replica runs when the config names no `engine.kind`. */
  defaultEngineKind: EngineKind;
}

interface LocalEntry {
  readonly entry: ReplicaEntry;
  readonly index: number;
}

/** The cards of each local group of a list (DESIGN §3's rules: every group has cards, a card serves one group; none on CPU). */
function localGroupCards(locals: readonly LocalEntry[], cpu: boolean): number[][] {
  const cardsOf = ({ entry, index }: LocalEntry): number[] =>
    entry.gpus === undefined ? [] : parseCards(entry.gpus, `replicas[${index}].gpus`, `replica ${index}`);
  if (cpu) {
    const named = locals.find((local) => cardsOf(local).length > 0);
    if (named) {
      throw new ConfigError(
        `replicas[${named.index}].gpus: the group names cards but "gpu" is "cpu" (or no GPU was detected); remove the cards or the "cpu" setting`,
      );
    }
    return locals.map(() => []);
  }
  const owner = new Map<number, number>();
  return locals.map((local) => {
    const gpus = cardsOf(local);
    if (gpus.length === 0)
      throw new ConfigError(`replicas[${local.index}]: every local group needs cards, e.g. {"gpus": [0, 1]} (or a "url" for a remote server)`);
    for (const card of gpus) {
      const other = owner.get(card);
      if (other !== undefined)
        throw new ConfigError(`replicas[${local.index}].gpus: card ${card} is in replica ${other} and replica ${local.index}; each card may serve one replica`);
      owner.set(card, local.index);
    }
    return gpus;
  });
}

function remotePlanOf(url: string, entry: ReplicaEntry): RemotePlan {
  return {
    url,
    kind: entry.kind ?? 'auto',
    apiKey: entry.apiKey ?? null,
    slots: entry.slots ?? null,
    model: entry.model ?? null,
    timeouts: { ...DEFAULT_REMOTE_TIMEOUTS, ...entry.timeouts },
  };
}

/** A group's engine options over the base's: each option replaced, the prefix-cache budgets one by one. */
function mergeEngineOptions(base: EngineOptions, over: EngineOptions | undefined): EngineOptions {
  const prefixCache = base.prefixCache || over?.prefixCache ? { prefixCache: { ...base.prefixCache, ...over?.prefixCache } } : {};
  return { ...base, ...over, ...prefixCache };
}

/**
 * Resolves a parsed config into one plan per replica (a single plan means a single engine). CPU
 * engines share the cores among the local replicas; remote entries take no cards and no cores.
 */
export function planReplicas(config: RunConfig, machine: MachineFacts): ReplicaPlan[] {
  const { kind: engineKind = machine.defaultEngineKind, ...base } = config.engine ?? {};
  const baseEnv = config.env ?? {};
  const cpu = config.gpu === 'cpu' || (config.gpu === undefined && machine.detectedGpus.length === 0);
  const cards = config.gpu === undefined ? [...machine.detectedGpus] : config.gpu === 'cpu' ? [] : parseCards(config.gpu, 'gpu');
  // Fewer than two groups is a single engine: no count, a count ≤ 1, false, or an empty list.
  const replicas =
    config.replicas === undefined || config.replicas === false || (Array.isArray(config.replicas) && config.replicas.length === 0) ? 1 : config.replicas;
  const total = typeof replicas === 'number' ? Math.max(1, replicas) : replicas.length;
  const logFor = (index: number): string | null => (config.log ? (total > 1 ? `${config.log}.r${index}` : config.log) : null);

  const localPlan = (index: number, gpus: readonly number[], localCount: number, entry?: ReplicaEntry): ReplicaPlan => ({
    index,
    gpus,
    cpu,
    env: { ...cardVisibilityEnv(gpus), ...baseEnv, ...entry?.env },
    engine: cpu
      ? mergeEngineOptions({ threads: Math.max(1, Math.floor(machine.cpuCores / localCount)), ...base, gpuLayers: 0 }, entry?.args)
      : mergeEngineOptions(base, entry?.args),
    engineKind,
    logFile: logFor(index),
    remote: null,
  });

  if (typeof replicas === 'number') {
    const indices = Array.from({ length: total }, (_, index) => index);
    if (cpu) return indices.map((index) => localPlan(index, [], total));
    if (cards.length === 0) throw new ConfigError('gpu: the card list is empty; list the cards to use, or set "gpu": "cpu"');
    if (cards.length % total !== 0) {
      const options = divisorsOf(cards.length).join(', ');
      throw new ConfigError(
        `replicas: ${total} replicas cannot split the ${cards.length} cards [${cards.join(', ')}] into equal groups; ` +
          `use a count that divides ${cards.length} (${options}), or name the groups: "replicas": [{"gpus": [..]}, {"gpus": [..]}]`,
      );
    }
    const size = cards.length / total;
    return indices.map((index) => localPlan(index, cards.slice(index * size, (index + 1) * size), total));
  }

  const locals = replicas.flatMap((entry, index) => (entry.url === undefined ? [{ entry, index }] : []));
  const groupCards = new Map(localGroupCards(locals, cpu).map((gpus, i) => [locals[i]!.index, gpus]));
  return replicas.map((entry, index) =>
    entry.url === undefined
      ? localPlan(index, groupCards.get(index)!, locals.length, entry)
      : { index, gpus: [], cpu: false, env: {}, engine: {}, engineKind: null, logFile: logFor(index), remote: remotePlanOf(entry.url, entry) },
  );
}
