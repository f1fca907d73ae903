/**
 * The control API for the browser UI: the contract served over a WebSocket at `/control`. Calls are
 * `{type: "call", id, name, args}` answered by `{type: "result", id, ok, value | error}`; events
 * (replicas, slots, throughput and GPU figures every `eventIntervalMs`, log lines, rebuild progress, load steps and chat pieces as they come) are pushed to every
 * client. Only upgrades that passed the front's Host, Origin and token checks reach it.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { bridgeRequestSchema, contract, type BridgeReply, type ContractHandlers, type EventName, type EventPayload } from '../../../common/contract.js';
import { invokeCall } from '../contract-handlers.js';
import type { Workstation } from '../workstation.js';

const MAX_MESSAGE_BYTES = 64 * 1024;

export class ControlSocket {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: (() => void)[];

  constructor(
    private readonly workstation: Workstation,
    private readonly handlers: ContractHandlers,
    eventIntervalMs = 1000,
  ) {
    this.server.on('connection', (socket) => this.onConnection(socket));
    this.timer = setInterval(() => void this.pushState(), eventIntervalMs);
    this.timer.unref();
    this.unsubscribe = [
      workstation.onLog((line) => this.broadcast('log', { line })),
      workstation.onRebuildProgress((progress) => this.broadcast('rebuild', progress)),
      workstation.onLoadStep((step) => this.broadcast('load', step)),
      workstation.chat.onPiece((piece) => this.broadcast('chat', piece)),
    ];
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.server.handleUpgrade(req, socket, head, (ws) => this.server.emit('connection', ws, req));
  }

  private onConnection(socket: WebSocket): void {
    socket.on('message', (data, isBinary) => {
      void this.onMessage(socket, isBinary ? null : data.toString());
    });
    void this.pushState(socket);
  }

  private async onMessage(socket: WebSocket, text: string | null): Promise<void> {
    let raw: unknown;
    try {
      raw = text === null ? undefined : JSON.parse(text);
    } catch {
      return this.reply(socket, { type: 'result', id: null, ok: false, error: 'invalid JSON' });
    }
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
    return JSON.stringify({ type: 'event', name, payload: contract.events[name].parse(payload) } satisfies BridgeReply);
  }

  private broadcast<E extends EventName>(name: E, payload: EventPayload<E>): void {
    if (this.server.clients.size === 0) return;
    const text = this.event(name, payload);
    for (const client of this.server.clients) if (client.readyState === client.OPEN) client.send(text);
  }

  /** Sends the replica view, slot view and throughput, to one new client or to all. */
  private async pushState(only?: WebSocket): Promise<void> {
    if (!only && this.server.clients.size === 0) return;
    const replicas = this.workstation.replicas.replicaView();
    const slots = await this.workstation.replicas.slotsView();
    const throughput = this.workstation.throughputSample();
    const gpus = this.workstation.gpuReport();
    for (const client of only ? [only] : this.server.clients) {
      if (client.readyState !== client.OPEN) continue;
      client.send(this.event('replicas', replicas));
      client.send(this.event('slots', slots));
      client.send(this.event('throughput', throughput));
      client.send(this.event('gpus', gpus));
    }
  }

  close(): void {
    clearInterval(this.timer);
    for (const stop of this.unsubscribe) stop();
    for (const client of this.server.clients) client.terminate();
    this.server.close();
  }
}
