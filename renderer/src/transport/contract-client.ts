/**
 * The renderer's one client of the contract (DESIGN §1): named calls and typed events, whichever
 * transport carries them — Electron IPC through the preload, or the control WebSocket in a browser.
 */
import type { CallArgs, CallName, CallResult, EventName, EventPayload } from '../../../common/contract.js';

/**
 * Where the link to core stands: `connecting` (the first try), `connected`, `reconnecting` (the server is
 * not answering: it retries with back-off by itself), `expired` (the server answers but refuses this tab's
 * control token: a restart with `--new-token`, or a wrong link; only a new link helps).
 */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'expired';

export interface ContractClient {
  call<N extends CallName>(name: N, args: CallArgs<N>): Promise<CallResult<N>>;
  /** Subscribes to an event; returns the unsubscribe. */
  on<E extends EventName>(name: E, listener: (payload: EventPayload<E>) => void): () => void;
  /** Connection state changes, the current one at once (the WebSocket reconnects; IPC is always connected). */
  onConnection(listener: (state: ConnectionState) => void): () => void;
}
