/**
 * The run config (DESIGN §3): which cards, how many replicas or which named groups, the model and the
 * engine options, and how they resolve into one plan per replica (cards, env, engine options, threads,
 * log file). Every rule that can be broken has an error that says what is wrong and how to fix it.
 */
import { z } from 'zod';
import { ROUTING_POLICY_NAMES } from '../../../common/contract.js';
import { flashAttentionSchema } from '../../../common/engine-protocol.js';
import { firstIssueInWords, inWords } from '../../../common/issue-words.js';
import { kvTypeSchema } from '../../../common/rebuild.js';

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
  })
  .partial()
  .strict();
export type EngineOptions = z.infer<typeof engineOptionsSchema>;

const envSchema = z.record(z.string(), z.string());
const cardsSchema = z.array(z.unknown());

const replicaEntrySchema = z
  .object({ gpus: cardsSchema.optional(), env: envSchema.optional(), args: engineOptionsSchema.optional() })
  .strict();

export const ROUTING_POLICIES = ROUTING_POLICY_NAMES;
export type RoutingPolicy = (typeof ROUTING_POLICIES)[number];

export const runConfigSchema = z
  .object({
    model: z.string().min(1),
    /** Card list; "cpu" for CPU engines; absent: the detected cards. */
    gpu: z.union([z.literal('cpu'), cardsSchema]).optional(),
    replicas: z.union([z.number().int(), z.array(replicaEntrySchema)]).optional(),
    engine: engineOptionsSchema.optional(),
    env: envSchema.optional(),
    /** Base log file; replica i writes `<log>.r<i>`. */
    log: z.string().min(1).optional(),
    routing: z.enum(ROUTING_POLICIES).optional(),
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

/** What one replica runs on. */
export interface ReplicaPlan {
  readonly index: number;
  /** Cards this replica sees; empty for a CPU engine. */
  readonly gpus: readonly number[];
  readonly cpu: boolean;
  /** Environment for the child: card visibility plus the config's env and the entry's env. */
  readonly env: Readonly<Record<string, string>>;
  readonly engine: EngineOptions;
  readonly logFile: string | null;
}

const VISIBILITY_VARIABLES = ['CUDA_VISIBLE_DEVICES', 'HIP_VISIBLE_DEVICES', 'GGML_VK_VISIBLE_DEVICES'] as const;

/** The env that lets a child see exactly `gpus` (none for a CPU engine). */
export function cardVisibilityEnv(gpus: readonly number[]): Record<string, string> {
  const value = gpus.join(',');
  return Object.fromEntries(VISIBILITY_VARIABLES.map((name) => [name, value]));
}

function parseCards(cards: readonly unknown[], where: string): number[] {
  return cards.map((card) => {
    if (typeof card !== 'number' || !Number.isInteger(card) || card < 0) {
      throw new ConfigError(`${where}: card ${JSON.stringify(card)} is not a card number (cards are whole numbers such as 0, 1, 2)`);
    }
    return card;
  });
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
}

/** Resolves a parsed config into one plan per replica (a single plan means a single engine). */
export function planReplicas(config: RunConfig, machine: MachineFacts): ReplicaPlan[] {
  const base = config.engine ?? {};
  const baseEnv = config.env ?? {};
  const logFor = (index: number, total: number): string | null =>
    config.log ? (total > 1 ? `${config.log}.r${index}` : config.log) : null;
  const cpu = config.gpu === 'cpu' || (config.gpu === undefined && machine.detectedGpus.length === 0);
  const cards = config.gpu === undefined ? [...machine.detectedGpus] : config.gpu === 'cpu' ? [] : parseCards(config.gpu, 'gpu');

  const cpuPlans = (count: number, entries: readonly z.infer<typeof replicaEntrySchema>[] = []): ReplicaPlan[] => {
    const threads = Math.max(1, Math.floor(machine.cpuCores / count));
    return Array.from({ length: count }, (_, index) => ({
      index,
      gpus: [],
      cpu: true,
      env: { ...cardVisibilityEnv([]), ...baseEnv, ...entries[index]?.env },
      engine: { threads, ...base, gpuLayers: 0, ...entries[index]?.args },
      logFile: logFor(index, count),
    }));
  };

  const gpuPlan = (index: number, gpus: number[], total: number, entry?: z.infer<typeof replicaEntrySchema>): ReplicaPlan => ({
    index,
    gpus,
    cpu: false,
    env: { ...cardVisibilityEnv(gpus), ...baseEnv, ...entry?.env },
    engine: { ...base, ...entry?.args },
    logFile: logFor(index, total),
  });

  const replicas = config.replicas ?? 1;
  if (typeof replicas === 'number') {
    const count = Math.max(1, replicas);
    if (cpu) return cpuPlans(count);
    if (cards.length === 0) throw new ConfigError('gpu: the card list is empty; list the cards to use, or set "gpu": "cpu"');
    if (cards.length % count !== 0) {
      const options = divisorsOf(cards.length).join(', ');
      throw new ConfigError(
        `replicas: ${count} replicas cannot split the ${cards.length} cards [${cards.join(', ')}] into equal groups; ` +
          `use a count that divides ${cards.length} (${options}), or name the groups: "replicas": [{"gpus": [..]}, {"gpus": [..]}]`,
      );
    }
    const size = cards.length / count;
    return Array.from({ length: count }, (_, index) => gpuPlan(index, cards.slice(index * size, (index + 1) * size), count));
  }

  if (replicas.length === 0) throw new ConfigError('replicas: the list of groups is empty; give at least one {"gpus": [..]} or a count');
  if (cpu) {
    if (replicas.some((entry) => entry.gpus && entry.gpus.length > 0)) {
      throw new ConfigError('replicas: groups name cards but "gpu" is "cpu" (or no GPU was detected); remove the cards or the "cpu" setting');
    }
    return cpuPlans(replicas.length, replicas);
  }
  const owner = new Map<number, number>();
  const groups = replicas.map((entry, index) => {
    if (!entry.gpus || entry.gpus.length === 0) throw new ConfigError(`replicas[${index}]: every group needs cards, e.g. {"gpus": [0, 1]}`);
    const gpus = parseCards(entry.gpus, `replicas[${index}].gpus`);
    for (const card of gpus) {
      const other = owner.get(card);
      if (other !== undefined) throw new ConfigError(`replicas: card ${card} is in replica ${other} and replica ${index}; each card may serve one replica`);
      owner.set(card, index);
    }
    return { gpus, entry };
  });
  // One named group is a single engine on those cards.
  return groups.map(({ gpus, entry }, index) => gpuPlan(index, gpus, groups.length, entry));
}
