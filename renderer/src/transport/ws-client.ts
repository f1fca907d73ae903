/**
 * The contract over the control WebSocket (`/control?token=…` on the page's own origin), for the UI in a
 * browser: calls matched to results by id, events to their listeners, and a reconnect with back-off
 * when the socket drops (calls made meanwhile wait for it).
 */
import type { BridgeReply, CallArgs, CallName, CallResult, EventName, EventPayload } from '../../../common/contract.js';
import type { ContractClient } from './contract-client.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

export function wsClient(url: string): ContractClient {
  let socket: WebSocket | undefined;
  let nextId = 1;
  let retryMs = 250;
  const pending = new Map<number, Pending>();
  const queued: string[] = [];
  const listeners = new Map<EventName, Set<(payload: never) => void>>();
  const connectionListeners = new Set<(connected: boolean) => void>();

  const connect = (): void => {
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      retryMs = 250;
      for (const text of queued.splice(0)) ws.send(text);
      for (const listener of connectionListeners) listener(true);
    };
    ws.onmessage = (message) => {
      const reply = JSON.parse(String(message.data)) as BridgeReply;
      if (reply.type === 'event') {
        for (const listener of listeners.get(reply.name) ?? []) (listener as (payload: unknown) => void)(reply.payload);
        return;
      }
      if (reply.id === null) return;
      const waiter = pending.get(reply.id);
      pending.delete(reply.id);
      if (reply.ok) waiter?.resolve(reply.value);
      else waiter?.reject(new Error(reply.error));
    };
    ws.onclose = () => {
      for (const listener of connectionListeners) listener(false);
      for (const [id, waiter] of pending) {
        waiter.reject(new Error('the connection to the workstation closed'));
        pending.delete(id);
      }
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    };
  };
  connect();

  return {
    call: <N extends CallName>(name: N, args: CallArgs<N>): Promise<CallResult<N>> =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        const text = JSON.stringify({ type: 'call', id, name, args });
        if (socket?.readyState === WebSocket.OPEN) socket.send(text);
        else queued.push(text);
      }),
    on: <E extends EventName>(name: E, listener: (payload: EventPayload<E>) => void) => {
      const set = listeners.get(name) ?? new Set();
      listeners.set(name, set);
      set.add(listener as (payload: never) => void);
      return () => set.delete(listener as (payload: never) => void);
    },
    onConnection: (listener) => {
      connectionListeners.add(listener);
      return () => connectionListeners.delete(listener);
    },
  };
}

/** The control URL for this page: its own host, the token from `?token=` (kept for reloads in this tab). */
export function controlUrl(location: Location, storage: Storage): string {
  const token = new URLSearchParams(location.search).get('token') ?? storage.getItem('manifold-token') ?? '';
  storage.setItem('manifold-token', token);
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/control?token=${encodeURIComponent(token)}`;
}
