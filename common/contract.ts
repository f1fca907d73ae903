/**
 * The contract between the renderer and core (DESIGN §1): every call and every event the UI may use,
 * each named once with its zod schemas. The WebSocket bridge (browser) and Electron IPC (desktop) both
 * serve exactly this table; handler signatures are derived from it, and core parses every argument.
 */
import { z } from 'zod';
import { reEvaluationSchema, slotViewSchema } from './engine-protocol.js';
import { downloadProgressSchema, modelUriSchema } from './model-download.js';
import { chatMessageSchema, chatSamplingChangeSchema, conversationSchema, conversationSummarySchema } from './conversation.js';
import { libraryEntrySchema } from './model-library.js';
import { prefixTierViewSchema } from './prefix-cache.js';
import { precheckRequestSchema, rebuildProgressSchema, rebuildRequestSchema, replicaRebuildOutcomeSchema, replicaVerdictSchema } from './rebuild.js';

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
  /** A remote replica's server: its URL, its kind, and the last health check's round trip; null for a local engine. */
  remote: z.object({ url: z.string(), kind: z.string(), latencyMs: z.number().nullable() }).nullable(),
  /** Its engine's prefix cache of evicted conversations, each tier with a budget; null when it keeps none (llama-server, remote, budgets 0). */
  prefixTiers: z.array(prefixTierViewSchema).nullable(),
  /** What its engine runs with now (updated by a live resize): tokens per slot, slots, KV type, layers on the GPU; null until it reports. */
  sizes: z.object({ contextSize: z.number().int(), slots: z.number().int(), kvType: z.string(), gpuLayers: z.number().int() }).nullable(),
  /** After a live resize that changed the slot layout: its engine evaluating the kept prefixes again in the background, d of N done; null when none runs. */
  reEvaluation: reEvaluationSchema.nullable().default(null),
});
export type ReplicaViewData = z.infer<typeof replicaViewSchema>;

export const globalSlotViewSchema = slotViewSchema.extend({ replica: z.number().int(), replicaSlot: z.number().int() });

export const workstationInfoSchema = z.object({
  status: z.enum(['idle', 'loading', 'ok', 'degraded', 'error']),
  model: z.string(),
  replicas: z.number().int(),
  replicas_alive: z.number().int(),
  totalSlots: z.number().int(),
  maxContext: z.number().int(),
  /** The routing policy in force (core/router/policies.ts names them). */
  routing: z.string(),
  apiBase: z.string(),
  /** Whether the loaded model's template thinks (the chat window then offers its thinking settings). */
  thinks: z.boolean(),
});

export const throughputSchema = z.object({
  at: z.number(),
  tokensPerSecond: z.number(),
  running: z.number().int(),
  /** Requests waiting in the core-held queue. */
  waiting: z.number().int(),
  /** The queue: requests refused so far (full or timed out) and percentiles of the recent waits for a slot. */
  queue: z.object({ rejected: z.number().int(), waitP50Ms: z.number(), waitP90Ms: z.number(), waitP99Ms: z.number() }),
});

/** How many one-second points core keeps for `getHistory` and the dashboard's charts show. */
export const HISTORY_SECONDS = 600;

/** One point of core's kept series (`getHistory`): a throughput sample and the requests routed to each replica so far. */
export const historySampleSchema = throughputSchema.extend({ routed: z.array(z.number().int()) });
export type HistorySample = z.infer<typeof historySampleSchema>;

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

/** One step of loading a model, for the loader's progress. */
export const loadStepSchema = z.object({
  step: z.enum(['validate', 'arena', 'replicas', 'ready', 'failed']),
  detail: z.string(),
  /** How far the step is, 0..1; null when it has no measure. */
  fraction: z.number().nullable(),
});
export type LoadStep = z.infer<typeof loadStepSchema>;

const conversationIdArgs = z.object({ id: z.string().regex(/^[a-z0-9-]{1,64}$/, 'a conversation id') }).strict();

/** What the loader shows of a GGUF file before it is loaded. */
export const modelInspectionSchema = z.object({
  path: z.string(),
  fileBytes: z.number(),
  name: z.string().nullable(),
  architecture: z.string().nullable(),
  parameters: z.number(),
  /** The tensor type holding most of the weights (e.g. Q4_K, F16). */
  quantisation: z.string(),
  contextLength: z.number().int().nullable(),
  layers: z.number().int().nullable(),
  /** Per card group (or the CPU's RAM): does one replica of this model fit? */
  fits: z.array(z.object({ group: z.string(), cards: z.array(z.number().int()), needBytes: z.number(), freeBytes: z.number(), fits: z.boolean() })),
});
export type ModelInspection = z.infer<typeof modelInspectionSchema>;

export const loadModelRequestSchema = z
  .object({
    path: z.string().min(1).max(4096),
    replicas: z.number().int().min(1).max(64).default(1),
    /** Card numbers to split among the replicas; "cpu" for CPU engines; absent: the detected cards. */
    gpus: z.union([z.literal('cpu'), z.array(z.number().int().nonnegative()).max(64)]).optional(),
    contextSize: z
      .number()
      .int()
      .min(64)
      .max(1 << 20)
      .default(4096),
    slots: z.number().int().min(1).max(256).default(2),
    sharedArena: z.boolean().default(false),
    /** Loading while a model serves replaces it only when this says so (the UI asks first). */
    replace: z.boolean().default(false),
  })
  .strict();

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One line of core's log. `seq` counts this process's entries (the previous run's lines, read back from the file, come first). */
export const logEntrySchema = z.object({ seq: z.number().int(), time: z.number(), level: z.enum(LOG_LEVELS), line: z.string() });
export type LogEntry = z.infer<typeof logEntrySchema>;

const noArgs = z.object({}).strict();

export const contract = {
  calls: {
    getInfo: { args: noArgs, result: workstationInfoSchema },
    getReplicas: { args: noArgs, result: z.array(replicaViewSchema) },
    getSlots: { args: noArgs, result: z.array(globalSlotViewSchema) },
    getGpus: { args: noArgs, result: gpuReportSchema },
    getArena: { args: noArgs, result: arenaStatusSchema },
    /** A policy core does not know is refused in words (core/router/router.ts, UnknownRoutingError). */
    setRoutingPolicy: { args: z.object({ policy: z.string().min(1) }).strict(), result: z.object({ policy: z.string() }) },
    restartReplica: {
      args: z.object({ replica: z.number().int().nonnegative() }).strict(),
      result: z.object({ replica: z.number().int(), state: z.string() }),
    },
    /** The pre-check of a live resize, per replica; touches nothing. */
    precheckRebuild: { args: precheckRequestSchema, result: z.array(replicaVerdictSchema) },
    /** A live resize of one replica or a rolling one of all; one outcome per replica. */
    rebuild: { args: rebuildRequestSchema, result: z.array(replicaRebuildOutcomeSchema) },
    /** Reads a GGUF's header (bounded) and says whether it fits each card group. */
    inspectModel: {
      args: z
        .object({
          path: z.string().min(1).max(4096),
          replicas: z.number().int().min(1).max(64).default(1),
          contextSize: z
            .number()
            .int()
            .min(64)
            .max(1 << 20)
            .default(4096),
          slots: z.number().int().min(1).max(256).default(2),
        })
        .strict(),
      result: modelInspectionSchema,
    },
    /** Recently loaded models and the GGUF files in the models folder. */
    listModels: {
      args: noArgs,
      result: z.object({ modelsDir: z.string().nullable(), recent: z.array(z.string()), found: z.array(z.object({ path: z.string(), bytes: z.number() })) }),
    },
    /** Loads this model (replacing the one loaded only with `replace: true`); `load` events say each step. */
    loadModel: { args: loadModelRequestSchema, result: workstationInfoSchema },
    /** Stops the loaded model's replicas; the workstation is idle after. */
    unloadModel: { args: noArgs, result: workstationInfoSchema },
    /** The models folder: each model's metadata, the loaded one marked, the suggested layout. */
    listLibrary: { args: noArgs, result: z.object({ modelsDir: z.string().nullable(), models: z.array(libraryEntrySchema) }) },
    /** Deletes a model of the models folder (all parts of a split one); never the loaded one. */
    deleteModel: { args: z.object({ path: z.string().min(1).max(4096) }).strict(), result: z.object({ deleted: z.array(z.string()) }) },
    /** Downloads a model into the models folder; resolves when it is there, checked; `download` events say how far. */
    downloadModel: { args: z.object({ uri: modelUriSchema }).strict(), result: z.object({ path: z.string(), files: z.array(z.string()), bytes: z.number() }) },
    /** Cancels a running download, or dismisses an ended one (it leaves the list). */
    cancelDownload: { args: z.object({ uri: z.string().min(1).max(2048) }).strict(), result: z.object({ cancelled: z.boolean() }) },
    /** The downloads running and the last ones ended. */
    listDownloads: { args: noArgs, result: z.array(downloadProgressSchema) },
    /** The Hub's GGUF repositories matching the words, most downloaded first. */
    searchHub: {
      args: z.object({ query: z.string().trim().min(1).max(200) }).strict(),
      result: z.object({ models: z.array(z.object({ id: z.string(), downloads: z.number() })) }),
    },
    /** A Hub repository's GGUF files, with their sizes and the URI each downloads by. */
    hubFiles: {
      args: z.object({ repo: z.string().min(3).max(200) }).strict(),
      result: z.object({ files: z.array(z.object({ path: z.string(), bytes: z.number(), uri: z.string() })) }),
    },
    /** Tokens per second, running requests and the queue now. */
    getThroughput: { args: noArgs, result: throughputSchema },
    listConversations: { args: noArgs, result: z.array(conversationSummarySchema) },
    getConversation: { args: conversationIdArgs, result: conversationSchema },
    createConversation: {
      args: z.object({ title: z.string().max(200).optional(), systemPrompt: z.string().max(20000).optional() }).strict(),
      result: conversationSchema,
    },
    updateConversation: {
      args: conversationIdArgs
        .extend({ title: z.string().max(200).optional(), systemPrompt: z.string().max(20000).optional(), sampling: chatSamplingChangeSchema.optional() })
        .strict(),
      result: conversationSchema,
    },
    deleteConversation: { args: conversationIdArgs, result: z.object({ id: z.string() }) },
    /** Adds a user message and streams the answer (`chat` events); resolves with the answer. */
    sendMessage: {
      args: conversationIdArgs
        .extend({
          content: z.string().min(1).max(100000),
          /** Answer in JSON: of this JSON schema, or any JSON object when `schema` is null (the chat's "JSON" toggle). */
          json: z
            .object({ schema: z.record(z.string(), z.unknown()).nullable() })
            .strict()
            .optional(),
        })
        .strict(),
      result: chatMessageSchema,
    },
    /** Answers the last user message again, replacing the last answer. */
    regenerate: { args: conversationIdArgs, result: chatMessageSchema },
    /** Edit-and-resend: a user message gets new text, what followed it is dropped, and it is answered again. */
    editMessage: {
      args: conversationIdArgs.extend({ messageId: z.string().min(1).max(200), content: z.string().min(1).max(100000) }).strict(),
      result: chatMessageSchema,
    },
    /** Stops the answer streaming in this conversation (it is kept as far as it got). */
    stopGeneration: { args: conversationIdArgs, result: z.object({ stopped: z.boolean() }) },
    /** The desktop's file dialog for a GGUF; in a browser there is none (path null, with why). */
    pickModelFile: { args: noArgs, result: z.object({ path: z.string().nullable(), reason: z.string().nullable() }) },
    /** Core's recent log entries, oldest first; after a restart they begin with the previous run's last lines. */
    getLogs: { args: noArgs, result: z.array(logEntrySchema) },
    /** Core's kept series of throughput samples (the last 600 s), for a dashboard that just connected. */
    getHistory: { args: noArgs, result: z.array(historySampleSchema) },
  },
  events: {
    replicas: z.array(replicaViewSchema),
    slots: z.array(globalSlotViewSchema),
    throughput: throughputSchema,
    gpus: gpuReportSchema,
    log: logEntrySchema,
    rebuild: rebuildProgressSchema,
    load: loadStepSchema,
    download: downloadProgressSchema,
    /** A piece of an answer as it streams. */
    chat: z.object({ conversationId: z.string(), messageId: z.string(), text: z.string(), part: z.enum(['content', 'reasoning']).default('content') }),
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
export const EVENT_NAMES = Object.keys(contract.events) as EventName[];

/** IPC channels of the desktop transport: one per call, one per event. */
export const callChannel = (name: CallName): string => `manifold:call:${name}`;
export const eventChannel = (name: EventName): string => `manifold:event:${name}`;

/**
 * What the preload exposes to the renderer as `window.manifold`: one named verb per call, and `on()`
 * for events, which returns its unsubscribe. Derived from the contract, so both move together.
 */
export type DesktopApi = { readonly [N in CallName]: (args: CallArgs<N>) => Promise<CallResult<N>> } & {
  on<E extends EventName>(name: E, listener: (payload: EventPayload<E>) => void): () => void;
};

/** Messages of the WebSocket bridge. */
export const bridgeRequestSchema = z.object({ type: z.literal('call'), id: z.number().int().nonnegative(), name: z.string(), args: z.unknown() });
export type BridgeReply =
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number | null; ok: false; error: string }
  | { type: 'event'; name: EventName; payload: unknown };
