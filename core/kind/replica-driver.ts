/**
 * What drives one replica, whatever its engine kind: the replica set starts and stops it, hears when it is
 * ready and when it is gone (with why), and while it is ready sends it generations through its `client`.
 * What only some kinds can do is a capability, absent where a kind has none (DESIGN §2): a process on this
 * machine, a live resize, prefix-cache tiers, slot files lent to its peers, a host prompt cache. The
 * replica set and the router ask for capabilities, never for a kind; each kind's folder implements this
 * (node-llama-cpp/, llama-server/, remote/) and engine-kinds/ lists them.
 */
import type { EventEmitter } from 'node:events';
import type { Activity, GenerateRequestInput, LoadOptionsInput, ReadyInfo, SlotView } from '../../common/engine-protocol.js';
import type { HostPromptCacheLimits, PrefixTier } from '../../common/prefix-cache.js';
import type { PoolSizes } from '../../common/rebuild.js';
import type { GenerationHandle, TokenChunk } from '../engine/engine-client.js';
import type { RebuildEngine } from '../rebuild/replica-rebuild.js';
import type { DriverEvents, SupervisorState } from '../supervisor/child-life.js';

/** What the dispatcher and the views use of a ready replica. */
export interface ReplicaClient {
  /**
   * Starts one generation. `done` rejects with EngineExitedError (or a subclass) when the replica is
   * lost under it — the dispatcher fails it over if no token was streamed — and with EngineRequestError
   * when the replica refuses the request. `slot`: the slot to run in, where core picks it (Replica.pinsSlots).
   */
  generate(request: GenerateRequestInput, onTokens?: (chunk: TokenChunk) => void, slot?: number): GenerationHandle;
  /** Whether it constrains output by a request's `grammar` (request-needs.ts routes grammar requests only to those that do). */
  readonly takesGrammar: boolean;
  /** Whether it reports each generated token's logprobs (a request's `logprobs`). */
  readonly takesLogprobs: boolean;
  /** The replica's slots as far as it tells (empty when it does not). */
  slots(): Promise<SlotView[]>;
  /** One embedding vector per input (token ids); absent where the replica serves no embeddings (llama-server, local or remote). */
  embed?(inputs: readonly (readonly number[])[]): Promise<number[][]>;
}

export interface RemoteDescription {
  readonly url: string;
  /** The peer's kind as detected (`llama-server`, `manifold`, `openai`), or `auto` before the first contact. */
  readonly kind: string;
  /** The last health check's round trip; null before the first. */
  readonly latencyMs: number | null;
}

/** A replica's process on this machine: pinned to its cores, loading the arena's weights, signalled by tests. */
export interface LocalProcess {
  /** What the next start loads. */
  readonly loadOptions: LoadOptionsInput;
  /** What later starts load: a resize's new sizes, or the arena's path. */
  updateLoad(change: Partial<LoadOptionsInput>): void;
  signal(signal: NodeJS.Signals): void;
}

/** How a live resize reaches a replica's engine (rebuild/replica-rebuild.ts), and how to tell its process is gone. */
export interface Rebuilder {
  readonly client: RebuildEngine;
  isEngineLost(error: unknown): boolean;
}

/** A slot saved to the slot files a replica lends: its entry and blocks, and the entries the save dropped. */
export interface ShelvedSlot {
  readonly entry: number;
  readonly blocks: readonly number[];
  readonly tokens: number;
  readonly bytes: number;
  readonly dropped: readonly number[];
}

/** The slot files a replica's child lends to its peers of the same layout (llama-server/slot-file-shelf.ts). */
export interface SlotFileLender {
  readonly budgetBytes: number;
  /** Saves `slot` after a reply; null when nothing was kept. */
  save(slot: number, blocks: readonly number[], heldTokens: number): Promise<ShelvedSlot | null>;
}

export interface ReplicaDriver extends EventEmitter<DriverEvents> {
  readonly state: SupervisorState;
  /** The ready replica's client; undefined unless ready. */
  readonly client: ReplicaClient | undefined;
  /** The local engine's pid; undefined for a remote replica. */
  readonly pid: number | undefined;
  /** A remote replica's server, for the views; absent for a local engine. */
  readonly remote?: RemoteDescription;
  /** Connects or spawns and loads; resolves when ready, rejects (and emits `exit`) when it cannot. */
  start(): Promise<ReadyInfo>;
  /** Stops (a local engine) or disconnects (a remote); resolves when done. */
  stop(): Promise<void>;
  /** Releases what outlives stops (log files, timers). */
  close(): Promise<void>;

  // Capabilities: absent where the kind has none.
  /** Its process on this machine; absent for a remote replica. */
  readonly local?: LocalProcess;
  /** A live resize to `sizes` of the ready engine (DESIGN §5); absent where Manifold cannot resize it (a remote server). */
  rebuilder?(sizes: PoolSizes): Rebuilder;
  /** The engine's activity, read while it evaluates a resize's kept prefixes again after Applied; absent where that never happens. */
  activity?(): Promise<Activity>;
  /** Each tier's byte budget of the prefix cache it keeps beyond its slots (the dashboard's tiers); absent: none. */
  prefixTierBudgets?(): Record<PrefixTier, number> | null;
  /** The tiers of its peers' prefix caches it can restore from (DESIGN §4); absent: every tier. */
  readonly borrowTiers?: readonly PrefixTier[];
  /** The slot files its ready child lends; null when it lends none. */
  readonly slotFiles?: SlotFileLender | null;
  /** Its host-memory prompt cache, which the routing index mirrors; null when off or before the first start. */
  readonly promptCache?: HostPromptCacheLimits | null;
}
