/**
 * Live resize (DESIGN §5) as data: the two pools of an engine, what a rebuild request may change, the
 * pre-check's verdict and the four outcomes of the transaction. Core, the engine protocol, the contract
 * and the HTTP admin call all use these schemas, so an outcome reads the same wherever it is shown.
 */
import { z } from 'zod';

export const POOLS = ['kv', 'weights'] as const;
export type Pool = (typeof POOLS)[number];

/**
 * The most KV cells (tokens per slot × slots) one context may have. llama.cpp keeps per-cell bookkeeping
 * in RAM even when it only estimates a context, so far larger sizes cost gigabytes before anything can
 * refuse them (measured: estimating 2^30 cells exhausted 24 GiB).
 */
export const MAX_CONTEXT_CELLS = 1 << 24;

export const KV_TYPES = ['f32', 'f16', 'q8_0', 'q4_0'] as const;
export const kvTypeSchema = z.enum(KV_TYPES);
export type KvType = z.infer<typeof kvTypeSchema>;

/** A quantized KV type: llama.cpp quantizes the V cache only with flash attention. */
export const isQuantizedKv = (kvType: KvType): boolean => kvType.startsWith('q');

/** Layers offloaded to the GPU: `auto` lets node-llama-cpp fit them, a number is exact. */
export const gpuLayersSchema = z.union([z.literal('auto'), z.number().int().nonnegative()]);

/** What a rebuild changes; fields left out keep their current value. `gpuLayers` is the weights pool. */
export const rebuildChangeSchema = z
  .object({
    contextSize: z
      .number()
      .int()
      .min(64)
      .max(1 << 22)
      .optional(),
    slots: z.number().int().min(1).max(256).optional(),
    kvType: kvTypeSchema.optional(),
    gpuLayers: gpuLayersSchema.optional(),
  })
  .strict()
  .refine((c) => Object.values(c).some((v) => v !== undefined), { message: 'name at least one of contextSize, slots, kvType, gpuLayers' });
export type RebuildChange = z.infer<typeof rebuildChangeSchema>;

/** The sizes both pools have (or had); what a restore puts back. */
export const poolSizesSchema = z.object({
  contextSize: z.number().int(),
  slots: z.number().int(),
  kvType: kvTypeSchema,
  gpuLayers: gpuLayersSchema,
});
export type PoolSizes = z.infer<typeof poolSizesSchema>;

/** Just the pool sizes out of anything that has them (load options, an engine's live sizes). */
export const poolSizesOf = ({ contextSize, slots, kvType, gpuLayers }: PoolSizes): PoolSizes => ({ contextSize, slots, kvType, gpuLayers });

/** The sizes each pool owns. */
export const POOL_FIELDS: Readonly<Record<Pool, readonly (keyof PoolSizes)[]>> = {
  kv: ['contextSize', 'slots', 'kvType'],
  weights: ['gpuLayers'],
};

/** Only the sizes owned by `pools` (what a rollback restores: the touched pools, nothing else). */
export function sizesOfPools(sizes: PoolSizes, pools: readonly Pool[]): Partial<PoolSizes> {
  const fields = pools.flatMap((pool) => POOL_FIELDS[pool]);
  return Object.fromEntries(fields.map((field) => [field, sizes[field]])) as Partial<PoolSizes>;
}

/** The pools a change touches: what it names, and kv whenever weights change (the context lives on the model). */
export function touchedPools(change: RebuildChange): Pool[] {
  if (change.gpuLayers !== undefined) return ['kv', 'weights'];
  return ['kv'];
}

/** The sizes after `change`, starting from `current`. */
export const changedSizes = (current: PoolSizes, change: RebuildChange): PoolSizes => ({
  contextSize: change.contextSize ?? current.contextSize,
  slots: change.slots ?? current.slots,
  kvType: change.kvType ?? current.kvType,
  gpuLayers: change.gpuLayers ?? current.gpuLayers,
});

const bytes = z.number().nonnegative();
const memoryNeedSchema = z.object({ ram: bytes, vram: bytes });

export const precheckVerdictSchema = z.object({
  fits: z.boolean(),
  pools: z.array(z.enum(POOLS)),
  /** node-llama-cpp's estimate for the touched pools at the new sizes. */
  needed: memoryNeedSchema,
  /** Free now plus what the touched pools give back when freed. */
  available: memoryNeedSchema,
  /** Bytes missing (0 where it fits). */
  shortfall: memoryNeedSchema,
  /** One sentence: why it fits or what is short, in bytes. */
  reason: z.string(),
});
export type PrecheckVerdict = z.infer<typeof precheckVerdictSchema>;

/** How one slot's prefix came back after a rebuild. */
export const keptPrefixSchema = z.object({
  /** The slot that held it before. */
  from: z.number().int().nonnegative(),
  /** The slot holding it now; null when it was dropped. */
  to: z.number().int().nonnegative().nullable(),
  tokens: z.number().int().nonnegative(),
  /** `state_file`: loaded from the saved state; `re_evaluation`: its tokens are evaluated again after Applied
   * (the slot count changed); `dropped`: it does not fit the new sizes or there is no slot left for it. */
  restoredBy: z.enum(['state_file', 're_evaluation', 'dropped']),
});
export type KeptPrefix = z.infer<typeof keptPrefixSchema>;

export const prefixReportSchema = z.object({
  kept: z.number().int().nonnegative(),
  dropped: z.number().int().nonnegative(),
  slots: z.array(keptPrefixSchema),
});
export type PrefixReport = z.infer<typeof prefixReportSchema>;

export const rebuildTimingsSchema = z.object({
  saveMs: z.number(),
  teardownMs: z.number(),
  allocateMs: z.number(),
  restoreMs: z.number(),
});

/** Where a refusal came from: the pre-check, the barrier, or the engine before it freed anything. */
export const refusalStageSchema = z.enum(['precheck', 'barrier', 'engine']);

export const rebuildOutcomeSchema = z.discriminatedUnion('outcome', [
  z.object({
    outcome: z.literal('Applied'),
    engine_preserved: z.literal(true),
    pools: z.array(z.enum(POOLS)),
    /** The live sizes, as the engine reports them after the change. */
    sizes: poolSizesSchema,
    prefixes: prefixReportSchema,
    timings: rebuildTimingsSchema,
  }),
  z.object({
    outcome: z.literal('RejectedIntact'),
    engine_preserved: z.literal(true),
    stage: refusalStageSchema,
    reason: z.string(),
  }),
  z.object({
    outcome: z.literal('RolledBack'),
    engine_preserved: z.literal(true),
    reason: z.string(),
    /** The touched pools, back at their old sizes. */
    restored: z.object({ pools: z.array(z.enum(POOLS)), sizes: poolSizesSchema }),
    prefixes: prefixReportSchema,
  }),
  z.object({
    outcome: z.literal('Latched'),
    engine_preserved: z.literal(false),
    reason: z.string(),
    rollback_error: z.string(),
  }),
]);
export type RebuildOutcome = z.infer<typeof rebuildOutcomeSchema>;
export type OutcomeName = RebuildOutcome['outcome'];

/** One replica's outcome in a (rolling) rebuild; `skipped` when an earlier replica's outcome stopped the roll. */
export const replicaRebuildOutcomeSchema = z.union([
  z.object({ replica: z.number().int() }).and(rebuildOutcomeSchema),
  z.object({ replica: z.number().int(), outcome: z.literal('Skipped'), reason: z.string() }),
]);
export type ReplicaRebuildOutcome = z.infer<typeof replicaRebuildOutcomeSchema>;

export const REBUILD_BARRIER_TIMEOUT_MS = 60_000;

/** A rebuild as the control API and the HTTP admin call take it. */
export const rebuildRequestSchema = z
  .object({
    /** One replica, or `all` for a rolling rebuild (one replica at a time). */
    replica: z.union([z.number().int().nonnegative(), z.literal('all')]),
    change: rebuildChangeSchema,
    /** Go ahead without the pre-check (node-llama-cpp's own memory checks still apply). */
    skipPrecheck: z.boolean().default(false),
    /** How long running requests may take to finish before the rebuild is refused. */
    barrierTimeoutMs: z.number().int().min(0).max(600_000).default(REBUILD_BARRIER_TIMEOUT_MS),
  })
  .strict();
export type RebuildRequest = z.infer<typeof rebuildRequestSchema>;
export type RebuildRequestInput = z.input<typeof rebuildRequestSchema>;

export const precheckRequestSchema = rebuildRequestSchema.pick({ replica: true, change: true }).strict();
export type PrecheckRequest = z.infer<typeof precheckRequestSchema>;

/** `warning`: what fits but a user should know (a context beyond the model's trained length). */
export const replicaVerdictSchema = z.union([
  z.object({ replica: z.number().int(), warning: z.string().optional() }).and(precheckVerdictSchema),
  z.object({ replica: z.number().int(), fits: z.literal(false), reason: z.string(), warning: z.string().optional() }),
]);
export type ReplicaVerdict = z.infer<typeof replicaVerdictSchema>;

export const REBUILD_STAGES = ['precheck', 'barrier', 'rebuilding', 'done'] as const;
/** Progress of a rebuild, for the dashboard: which replica is at which step (and its outcome when done). */
export const rebuildProgressSchema = z.object({
  replica: z.number().int(),
  stage: z.enum(REBUILD_STAGES),
  outcome: replicaRebuildOutcomeSchema.nullable(),
});
export type RebuildProgress = z.infer<typeof rebuildProgressSchema>;
