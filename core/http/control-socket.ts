/**
 * The control API for the browser UI: the contract served over a WebSocket at `/control`. Calls are
 * `{type: "call", id, name, args}` answered by `{type: "result", id, ok, value | error}`; events
 * (replicas, slots, throughput and GPU figures every `eventIntervalMs`, log lines, rebuild progress, load steps and chat pieces as they come) are
 * pushed to every
 * client. Only upgrades that passed the front's Host, Origin and token checks reach it.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { bridgeRequestSchema, type BridgeReply, type ContractHandlers, type EventName, type EventPayload } from '../../common/contract.js';
import { NOT_JSON, parseJsonOr } from '../../common/parse-json.js';
import { checkedEvent, feedEvents, stateEvents } from '../contract-events.js';
import { invokeCall } from '../contract-handlers.js';
import type { Workstation } from '../workstation.js';

const MAX_MESSAGE_BYTES = 64 * 1024;

export class ControlSocket {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly stopFeed: () => void;

  constructor(
    private readonly workstation: Workstation,
    private readonly handlers: ContractHandlers,
    eventIntervalMs = 1000,
  ) {
    this.server.on('connection', (socket) => this.onConnection(socket));
    this.stopFeed = feedEvents(
      workstation,
      (name, payload) => this.broadcast(name, payload),
      eventIntervalMs,
      () => this.server.clients.size > 0,
    );
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.server.handleUpgrade(req, socket, head, (ws) => this.server.emit('connection', ws, req));
  }

  private onConnection(socket: WebSocket): void {
    socket.on('message', (data, isBinary) => {
      void this.onMessage(socket, isBinary ? null : data.toString());
    });
    void this.greet(socket);
  }

  private async onMessage(socket: WebSocket, text: string | null): Promise<void> {
    const raw = text === null ? undefined : parseJsonOr(text, NOT_JSON);
    if (raw === NOT_JSON) return this.reply(socket, { type: 'result', id: null, ok: false, error: 'invalid JSON' });
    const request = bridgeRequestSchema.safeParse(raw);
    if (!request.success) return this.reply(socket, { type: 'result', id: null, ok: false, error: 'expected {"type": "call", "id", "name", "args"}' });
    const { id, name, args } = request.data;
    try {
      this.reply(socket, { type: 'result', id, ok: true, value: await invokeCall(this.handlers, name, args) });
    } catch (error) {
      this.reply(socket, { type: 'result', id, ok: false, error: (error as Error).message });
    }
  }

  private reply(socket: WebSocket, message: BridgeReply): void {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  }

  private event<E extends EventName>(name: E, payload: EventPayload<E>): string {
    return JSON.stringify({ type: 'event', name, payload: checkedEvent(name, payload) } satisfies BridgeReply);
  }

  private broadcast<E extends EventName>(name: E, payload: EventPayload<E>): void {
    if (this.server.clients.size === 0) return;
    const text = this.event(name, payload);
    for (const client of this.server.clients) if (client.readyState === client.OPEN) client.send(text);
  }

  /** A new client gets the timed events at once rather than at the next tick. */
  private async greet(socket: WebSocket): Promise<void> {
    const state = await stateEvents(this.workstation);
    if (socket.readyState !== socket.OPEN) return;
    for (const name of ['replicas', 'slots', 'throughput', 'gpus'] as const) socket.send(this.event(name, state[name]));
  }

  close(): void {
    this.stopFeed();
    for (const client of this.server.clients) client.terminate();
    this.server.close();
  }
}
