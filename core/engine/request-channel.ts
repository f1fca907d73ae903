/**
 * Core's side of a request/reply protocol with one child (an engine, a tokenizer): sends each request
 * with a fresh id, parses every message the child sends with the protocol's parse function, and settles
 * each request from the messages carrying its id — its reply type resolves it, an `error` reply rejects
 * it (as the caller's error), anything else is an event handed to the request's `onEvent`. A message
 * that fits no request is a protocol problem, reported in words naming the child. When the child exits,
 * every pending request fails with the caller's exit error. A child sends the messages of one event-loop
 * turn as one IPC message, an array when there are several; each element is parsed once, in order. It
 * also says how long the oldest unanswered request has waited.
 */
import type { EngineExit, EngineProcess } from './engine-process.js';

/** What every message from a child carries: its type and the id of the request it answers (null: none). */
export interface ChildMessage {
  readonly type: string;
  readonly id: number | null;
}

/** A child's `error` reply. */
export type ErrorReply<Message> = Extract<Message, { type: 'error'; message: string }>;

/** A request as the caller builds it: without its id, which the channel adds. */
export type RequestBody<Request> = Request extends unknown ? Omit<Request, 'id'> : never;

/** A parse result in zod's `safeParse` shape. */
export type ParseResult<Message> = { success: true; data: Message } | { success: false; error: { issues: readonly { message: string }[] } };

/** Called with each message for a request that is neither its reply nor an error; `fail` ends the request. */
export type OnEvent<Message> = (message: Message, fail: (error: Error) => void) => void;

export interface RequestChannelOptions<Message extends ChildMessage> {
  /** The child's name in protocol problems ("engine", "tokenizer"). */
  readonly peer: string;
  readonly parse: (raw: unknown) => ParseResult<Message>;
  /** The error an `error` reply rejects its request with. */
  readonly replyError: (reply: ErrorReply<Message>) => Error;
  /** The error every pending request fails with once the child has exited. */
  readonly exitError: (exit: EngineExit) => Error;
  readonly onProtocolError: (problem: string) => void;
}

interface Pending<Message> {
  readonly replyType: string;
  readonly sentAt: number;
  resolve(message: Message): void;
  reject(error: Error): void;
  onEvent?: OnEvent<Message>;
}

function isErrorReply<Message extends ChildMessage>(message: Message): message is ErrorReply<Message> {
  return message.type === 'error';
}

export class RequestChannel<Message extends ChildMessage, Body extends object> {
  private lastId = 0;
  private readonly pending = new Map<number, Pending<Message>>();
  private exit: EngineExit | undefined;
  readonly exited: Promise<EngineExit>;

  constructor(
    readonly process: EngineProcess,
    private readonly options: RequestChannelOptions<Message>,
  ) {
    process.onMessage((raw) => this.receive(raw));
    this.exited = new Promise((resolve) => {
      process.onExit((exit) => {
        this.exit = exit;
        const error = options.exitError(exit);
        for (const pending of this.pending.values()) pending.reject(error);
        this.pending.clear();
        resolve(exit);
      });
    });
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** An id no request has used yet, for a caller that needs it before calling. */
  newId(): number {
    return ++this.lastId;
  }

  /** How long the oldest unanswered request has waited; 0 when none is waiting. */
  oldestWaitMs(now = performance.now()): number {
    let oldest = now;
    for (const pending of this.pending.values()) oldest = Math.min(oldest, pending.sentAt);
    return now - oldest;
  }

  /** Sends `body` with `id` and resolves with the child's `replyType` message for it. */
  call<T extends Message['type']>(body: Body, replyType: T, onEvent?: OnEvent<Message>, id = this.newId()): Promise<Extract<Message, { type: T }>> {
    if (this.exit) return Promise.reject(this.options.exitError(this.exit));
    return new Promise<Extract<Message, { type: T }>>((resolve, reject) => {
      this.pending.set(id, { replyType, sentAt: performance.now(), resolve: resolve as (m: Message) => void, reject, ...(onEvent ? { onEvent } : {}) });
      if (!this.process.send({ ...body, id })) {
        this.pending.delete(id);
        reject(this.options.exitError(this.exit ?? { code: null, signal: null }));
      }
    });
  }

  private receive(raw: unknown): void {
    if (Array.isArray(raw)) {
      for (const message of raw) this.receiveOne(message);
    } else {
      this.receiveOne(raw);
    }
  }

  private receiveOne(raw: unknown): void {
    const { peer, onProtocolError } = this.options;
    const parsed = this.options.parse(raw);
    if (!parsed.success) {
      onProtocolError(`${peer} sent a malformed message: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
      return;
    }
    const message = parsed.data;
    if (message.id === null) {
      onProtocolError(`${peer} error without a request: ${isErrorReply(message) ? message.message : message.type}`);
      return;
    }
    const { id } = message;
    const pending = this.pending.get(id);
    if (!pending) {
      onProtocolError(`${peer} replied to unknown request ${id} (${message.type})`);
      return;
    }
    if (isErrorReply(message)) {
      this.pending.delete(id);
      pending.reject(this.options.replyError(message));
    } else if (message.type === pending.replyType) {
      this.pending.delete(id);
      pending.resolve(message);
    } else {
      pending.onEvent?.(message, (error) => {
        this.pending.delete(id);
        pending.reject(error);
      });
    }
  }
}
