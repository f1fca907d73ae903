/**
 * What Manifold is told of one remote replica (a server on another machine that already runs the model):
 * where it is, what kind of server it is (or `auto` to ask it), its API key, its slots and the name it
 * gives the model, and how long to wait for it. The run config produces one plan per remote entry; the
 * link (remote-link.ts) and the client (remote-client.ts) work from it.
 */

/** The servers Manifold can front: llama.cpp's llama-server, another Manifold node, any OpenAI-style server (vLLM, SGLang, Ollama). */
export type RemoteKind = 'llama-server' | 'manifold' | 'openai';

export const REMOTE_KINDS: readonly RemoteKind[] = ['llama-server', 'manifold', 'openai'];

export interface RemoteTimeouts {
  /** Until the peer's response headers (a health poll: until its whole answer). */
  readonly connectMs: number;
  /** From sending a generation until its first token. */
  readonly firstTokenMs: number;
  /** Between two chunks of a stream. */
  readonly idleMs: number;
}

export const DEFAULT_REMOTE_TIMEOUTS: RemoteTimeouts = { connectMs: 5000, firstTokenMs: 120_000, idleMs: 60_000 };

/** Slots assumed for a peer that does not say how many it has. */
export const DEFAULT_REMOTE_SLOTS = 4;

export interface RemotePlan {
  /** http(s) base URL without a trailing slash, e.g. http://127.0.0.1:8081. */
  readonly url: string;
  /** `auto`: llama-server answers GET /props; Manifold answers GET /slots and owns its /v1/models; else openai. */
  readonly kind: RemoteKind | 'auto';
  /** Sent as `Authorization: Bearer`. */
  readonly apiKey: string | null;
  /** null: what the peer says (llama-server's total_slots, Manifold's /slots), else DEFAULT_REMOTE_SLOTS. */
  readonly slots: number | null;
  /** The peer's name for the model when it differs from the local file name. */
  readonly model: string | null;
  readonly timeouts: RemoteTimeouts;
}
