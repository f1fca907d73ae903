/**
 * The contract over the control WebSocket (`/control?token=…` on the page's own origin), for the UI in a
 * browser: calls matched to results by id, events to their listeners. When the socket drops (or cannot
 * open), `GET /control` with the same token tells why: no answer is a server that is gone or restarting
 * (`reconnecting`: it retries with back-off, calls made meanwhile wait), a 401 is a token the server no
 * longer takes (`expired`: it stops trying, waiting calls fail — a new dashboard link is needed).
 */
import type { BridgeReply, CallArgs, CallName, CallResult, EventName, EventPayload } from '../../../common/contract.js';
import type { ConnectionState, ContractClient } from './contract-client.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** The longest wait between two tries while the server is gone. */
const MAX_RETRY_MS = 5000;

/** The message of a call that cannot be made because the token was refused. */
const EXPIRED_MESSAGE = 'this tab’s session has expired: open the dashboard link the server prints';

/** What `GET /control` with the token says: the token works, is refused, or nobody answers. */
async function probe(checkUrl: string): Promise<'ok' | 'refused' | 'down'> {
  try {
    const res = await fetch(checkUrl, { cache: 'no-store' });
    return res.status === 204 ? 'ok' : res.status === 401 ? 'refused' : 'down';
  } catch {
    return 'down';
  }
}

export function wsClient(url: string): ContractClient {
  const checkUrl = url.replace(/^ws/, 'http');
  let socket: WebSocket | undefined;
  let nextId = 1;
  let retryMs = 250;
  let state: ConnectionState = 'connecting';
  const pending = new Map<number, Pending>();
  const queued: { id: number; text: string }[] = [];
  const listeners = new Map<EventName, Set<(payload: never) => void>>();
  const connectionListeners = new Set<(state: ConnectionState) => void>();

  const setState = (next: ConnectionState): void => {
    if (next === state) return;
    state = next;
    for (const listener of connectionListeners) listener(state);
  };
  const failWaiting = (message: string, all: boolean): void => {
    const sent = new Set(all ? pending.keys() : [...pending.keys()].filter((id) => !queued.some((q) => q.id === id)));
    for (const id of sent) {
      pending.get(id)?.reject(new Error(message));
      pending.delete(id);
    }
    if (all) queued.length = 0;
  };

  const connect = (): void => {
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      retryMs = 250;
      for (const { text } of queued.splice(0)) ws.send(text);
      setState('connected');
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
      // Calls already sent are lost with the socket; those not sent yet wait for the next one.
      failWaiting('the connection to the workstation closed', false);
      void probe(checkUrl).then((verdict) => {
        if (verdict === 'refused') {
          setState('expired');
          failWaiting(EXPIRED_MESSAGE, true);
          return;
        }
        setState('reconnecting');
        setTimeout(connect, retryMs);
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      });
    };
  };
  connect();

  return {
    call: <N extends CallName>(name: N, args: CallArgs<N>): Promise<CallResult<N>> =>
      new Promise((resolve, reject) => {
        if (state === 'expired') return reject(new Error(EXPIRED_MESSAGE));
        const id = nextId++;
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        const text = JSON.stringify({ type: 'call', id, name, args });
        if (socket?.readyState === WebSocket.OPEN) socket.send(text);
        else queued.push({ id, text });
      }),
    on: <E extends EventName>(name: E, listener: (payload: EventPayload<E>) => void) => {
      const set = listeners.get(name) ?? new Set();
      listeners.set(name, set);
      set.add(listener as (payload: never) => void);
      return () => set.delete(listener as (payload: never) => void);
    },
    onConnection: (listener) => {
      connectionListeners.add(listener);
      listener(state);
      return () => connectionListeners.delete(listener);
    },
  };
}

/**
 * The control URL for this page: its own host, the token from `?token=` (kept in `storage`, so a reload
 * or a bookmark of the bare page finds it).
 */
export function controlUrl(location: Location, storage: Storage): string {
  const token = new URLSearchParams(location.search).get('token') ?? storage.getItem('manifold-token') ?? '';
  storage.setItem('manifold-token', token);
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/control?token=${encodeURIComponent(token)}`;
}
