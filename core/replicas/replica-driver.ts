/**
 * What drives one replica, local or remote: the replica set starts and stops it, hears when it is ready
 * and when it is gone (with why), and while it is ready sends it generations through its `client`. A
 * local replica's driver is the engine supervisor (one engine child per start) or, for engine kind
 * `llama-server`, the supervisor of a llama-server child (`llama-server/llama-server-supervisor.ts`); a
 * remote replica's is a link to a server on another machine (`remote/remote-link.ts`), whose "heal" is a reconnect.
 */
import type { EventEmitter } from 'node:events';
import type { GenerateRequestInput, ReadyInfo, SlotView } from '../../common/engine-protocol.js';
import type { GenerationHandle, TokenChunk } from '../engine/engine-client.js';
import type { ExitReason, SupervisorState } from '../supervisor/engine-supervisor.js';

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

export interface ReplicaDriverEvents {
  ready: [ReadyInfo];
  exit: [ExitReason];
}

export interface ReplicaDriver extends EventEmitter<ReplicaDriverEvents> {
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
}
