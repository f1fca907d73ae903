/**
 * What the run config resolves a remote replica entry into (DESIGN §3, "Remote replicas"): the peer's
 * base URL, the kind of server it is (or 'auto' to ask it), its key, slots and model name where the
 * config gives them, and the link's timeouts. Config owns this type so the remote link imports it
 * from here, as the replica set does the local plan.
 */

/** The servers a remote replica may be: llama.cpp's llama-server, another Manifold node, any OpenAI-compatible server. */
export const REMOTE_KINDS = ['llama-server', 'manifold', 'openai'] as const;
export type RemoteKind = (typeof REMOTE_KINDS)[number];

export interface RemoteTimeouts {
  /** Opening the connection (and a health probe's answer). */
  connectMs: number;
  /** From sending a request to its first token; past it, the request fails over. */
  firstTokenMs: number;
  /** Silence in the middle of a stream; past it, the stream ends with an error. */
  idleMs: number;
}

export const DEFAULT_REMOTE_TIMEOUTS: Readonly<RemoteTimeouts> = { connectMs: 5000, firstTokenMs: 120_000, idleMs: 60_000 };

export interface RemotePlan {
  /** Normalized: lower-case scheme and host, default port dropped, no trailing slash. */
  readonly url: string;
  /** 'auto': detect from what the peer answers (`/props`, `/slots`, `/v1/models`). */
  readonly kind: RemoteKind | 'auto';
  readonly apiKey: string | null;
  /** null: as many as the peer reports. */
  readonly slots: number | null;
  /** The model name the peer serves under; null: whatever it reports. */
  readonly model: string | null;
  readonly timeouts: RemoteTimeouts;
}
