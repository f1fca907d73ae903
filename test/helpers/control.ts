/** Test helper: a client of the control WebSocket (the contract's calls and events), as the browser UI is. */
import { WebSocket } from 'ws';
import type { Front } from '../../core/http/front-server.js';
import { waitFor } from './engines.js';

export interface ControlMessage {
  type: string;
  id?: number;
  ok?: boolean;
  value?: unknown;
  error?: string;
  name?: string;
  payload?: unknown;
}

export interface ControlClient {
  socket: WebSocket;
  messages: ControlMessage[];
  call(name: string, args?: unknown): Promise<ControlMessage>;
  events(name: string): unknown[];
  close(): void;
}

const CALL_BOUND_MS = 180_000;

/** Opens `/control` with the front's token and collects every message. */
export async function openControl(front: Front, headers: Record<string, string> = {}): Promise<ControlClient> {
  const socket = new WebSocket(`${front.url.replace('http', 'ws')}/control?token=${front.token}`, { headers });
  const messages: ControlMessage[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as ControlMessage));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 1;
  return {
    socket,
    messages,
    call: (name, args = {}) => {
      const id = nextId++;
      socket.send(JSON.stringify({ type: 'call', id, name, args }));
      // An event wait: the bound only keeps a broken server from hanging the run (a 2-replica load on a busy machine took over 10 s).
      return waitFor(() => messages.find((m) => m.type === 'result' && m.id === id), `the answer to ${name}`, CALL_BOUND_MS);
    },
    events: (name) => messages.filter((m) => m.type === 'event' && m.name === name).map((m) => m.payload),
    close: () => socket.close(),
  };
}
