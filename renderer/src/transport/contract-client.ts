/**
 * The renderer's one client of the contract (DESIGN §1): named calls and typed events, whichever
 * transport carries them — Electron IPC through the preload, or the control WebSocket in a browser.
 */
import type { CallArgs, CallName, CallResult, EventName, EventPayload } from '../../../common/contract.js';

export interface ContractClient {
  call<N extends CallName>(name: N, args: CallArgs<N>): Promise<CallResult<N>>;
  /** Subscribes to an event; returns the unsubscribe. */
  on<E extends EventName>(name: E, listener: (payload: EventPayload<E>) => void): () => void;
  /** Connection state changes (the WebSocket reconnects; IPC is always connected). */
  onConnection(listener: (connected: boolean) => void): () => void;
}
