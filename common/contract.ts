/**
 * The contract between the renderer and core (DESIGN §1): every call and every event the UI may use,
 * each named once with its zod schemas. The WebSocket bridge (browser) and Electron IPC (desktop) both
 * serve exactly this table; handler signatures are derived from it, and core parses every argument.
 */
import { z } from 'zod';
import { slotViewSchema } from './engine-protocol.js';
import { precheckRequestSchema, rebuildProgressSchema, rebuildRequestSchema, replicaRebuildOutcomeSchema, replicaVerdictSchema } from './rebuild.js';

export const ROUTING_POLICY_NAMES = ['prefix', 'round-robin', 'least-loaded'] as const;

export const replicaViewSchema = z.object({
  replica: z.number().int(),
  alive: z.boolean(),
  running: z.number().int(),
  routed: z.number().int(),
  slots: z.number().int(),
  state: z.enum(['starting', 'ready', 'maintenance', 'latched', 'healing', 'failed', 'stopped']),
  /** Why a latched replica takes no requests; null otherwise. */
  latchReason: z.string().nullable(),
  gpus: z.array(z.number().int()),
  /** Logical CPUs the replica's engine is pinned to; empty when not pinned. */
  cpus: z.array(z.number().int()),
  cacheHitTokens: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  pid: z.number().int().nullable(),
});
export type ReplicaViewData = z.infer<typeof replicaViewSchema>;

export const globalSlotViewSchema = slotViewSchema.extend({ replica: z.number().int(), replicaSlot: z.number().int() });

export const workstationInfoSchema = z.object({
  status: z.enum(['loading', 'ok', 'degraded', 'error']),
  model: z.string(),
  replicas: z.number().int(),
  replicas_alive: z.number().int(),
  totalSlots: z.number().int(),
  maxContext: z.number().int(),
  routing: z.enum(ROUTING_POLICY_NAMES),
  apiBase: z.string(),
});

export const throughputSchema = z.object({
  at: z.number(),
  tokensPerSecond: z.number(),
  running: z.number().int(),
  waiting: z.number().int(),
});

export const gpuCardSchema = z.object({
  /** The card's number as configs name it (NVML's order); null for an engine's own figure. */
  card: z.number().int().nullable(),
  name: z.string(),
  memoryUsedBytes: z.number(),
  memoryTotalBytes: z.number(),
  utilizationPercent: z.number().nullable(),
  temperatureC: z.number().nullable(),
  powerW: z.number().nullable(),
  /** The replica using the card; null when none does. */
  replica: z.number().int().nullable(),
});

/** GPU figures for the dashboard: from NVML, else from the engines' own VRAM state, else none ("no GPU"). */
export const gpuReportSchema = z.object({
  source: z.enum(['nvml', 'engines', 'none']),
  cards: z.array(gpuCardSchema),
  /** One line for people: where the figures come from, or why there are none. */
  note: z.string(),
});
export type GpuReport = z.infer<typeof gpuReportSchema>;
export type GpuCard = z.infer<typeof gpuCardSchema>;

/** The shared arena (DESIGN §6): off (and why), filling, or ready with its size and hash. */
export const arenaStatusSchema = z.object({
  state: z.enum(['off', 'filling', 'ready', 'closed']),
  kind: z.enum(['memfd', 'shm-file', 'windows-section']).nullable(),
  /** Why there is no arena, when there is none. */
  reason: z.string().nullable(),
  modelBytes: z.number(),
  filledBytes: z.number(),
  sha256: z.string().nullable(),
  /** What the engines load the model from. */
  enginePath: z.string().nullable(),
  /** The RAM warning (arena + engines' private memory above free RAM); never a refusal. */
  warning: z.string().nullable(),
  fillMs: z.number().nullable(),
});
export type ArenaStatus = z.infer<typeof arenaStatusSchema>;

const noArgs = z.object({}).strict();

export const contract = {
  calls: {
    getInfo: { args: noArgs, result: workstationInfoSchema },
    getReplicas: { args: noArgs, result: z.array(replicaViewSchema) },
    getSlots: { args: noArgs, result: z.array(globalSlotViewSchema) },
    getGpus: { args: noArgs, result: gpuReportSchema },
    getArena: { args: noArgs, result: arenaStatusSchema },
    setRoutingPolicy: { args: z.object({ policy: z.enum(ROUTING_POLICY_NAMES) }).strict(), result: z.object({ policy: z.enum(ROUTING_POLICY_NAMES) }) },
    restartReplica: { args: z.object({ replica: z.number().int().nonnegative() }).strict(), result: z.object({ replica: z.number().int(), state: z.string() }) },
    /** The pre-check of a live resize, per replica; touches nothing. */
    precheckRebuild: { args: precheckRequestSchema, result: z.array(replicaVerdictSchema) },
    /** A live resize of one replica or a rolling one of all; one outcome per replica. */
    rebuild: { args: rebuildRequestSchema, result: z.array(replicaRebuildOutcomeSchema) },
  },
  events: {
    replicas: z.array(replicaViewSchema),
    slots: z.array(globalSlotViewSchema),
    throughput: throughputSchema,
    gpus: gpuReportSchema,
    log: z.object({ line: z.string() }),
    rebuild: rebuildProgressSchema,
  },
} as const;

export type Contract = typeof contract;
export type CallName = keyof Contract['calls'];
export type CallArgs<N extends CallName> = z.input<Contract['calls'][N]['args']>;
export type CallResult<N extends CallName> = z.infer<Contract['calls'][N]['result']>;
export type EventName = keyof Contract['events'];
export type EventPayload<E extends EventName> = z.infer<Contract['events'][E]>;

/** What core implements: one handler per call, arguments already parsed. */
export type ContractHandlers = { [N in CallName]: (args: z.infer<Contract['calls'][N]['args']>) => Promise<CallResult<N>> };

export const CALL_NAMES = Object.keys(contract.calls) as CallName[];

/** Messages of the WebSocket bridge. */
export const bridgeRequestSchema = z.object({ type: z.literal('call'), id: z.number().int().nonnegative(), name: z.string(), args: z.unknown() });
export type BridgeReply =
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number | null; ok: false; error: string }
  | { type: 'event'; name: EventName; payload: unknown };
