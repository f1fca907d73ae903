/**
 * Core's side of the tokenizer protocol for one tokenizer child: sends requests with fresh ids, parses every
 * message the child sends with the protocol's schemas, and settles each request from the reply carrying its
 * id (an error reply becomes a TokenizerError with the child's code). When the child exits, every pending
 * request fails with the error the supervisor makes for that exit. It also says how long the oldest
 * unanswered request has waited (the supervisor's hang check).
 */
import {
  tokenizerMessageSchema,
  type OpenStage,
  type TokenizerMessage,
  type TokenizerMessageOf,
  type TokenizerRequest,
} from '../../../common/tokenizer-protocol.js';
import type { EngineExit, EngineProcess } from '../engine/engine-process.js';
import { TokenizerError } from './tokenizer-errors.js';

export type TokenizerRequestBody = TokenizerRequest extends infer R ? (R extends TokenizerRequest ? Omit<R, 'id'> : never) : never;

interface Pending {
  readonly replyType: TokenizerMessage['type'];
  readonly sentAt: number;
  resolve(message: TokenizerMessage): void;
  reject(error: Error): void;
  onStage?(stage: OpenStage): void;
}

export class TokenizerChannel {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private exit: EngineExit | undefined;
  readonly exited: Promise<EngineExit>;

  constructor(
    readonly process: EngineProcess,
    /** The error every pending request fails with when the child exits. */
    private readonly exitError: (exit: EngineExit) => Error,
    private readonly onProtocolError: (problem: string) => void,
  ) {
    process.onMessage((raw) => this.receive(raw));
    this.exited = new Promise((resolve) => {
      process.onExit((exit) => {
        this.exit = exit;
        const error = this.exitError(exit);
        for (const pending of this.pending.values()) pending.reject(error);
        this.pending.clear();
        resolve(exit);
      });
    });
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  /** How long the oldest unanswered request has waited; 0 when none is waiting. */
  oldestWaitMs(now = performance.now()): number {
    let oldest = now;
    for (const pending of this.pending.values()) oldest = Math.min(oldest, pending.sentAt);
    return now - oldest;
  }

  call<T extends TokenizerMessage['type']>(body: TokenizerRequestBody, replyType: T, onStage?: (stage: OpenStage) => void): Promise<TokenizerMessageOf<T>> {
    if (this.exit) return Promise.reject(this.exitError(this.exit));
    const id = this.nextId++;
    return new Promise<TokenizerMessageOf<T>>((resolve, reject) => {
      this.pending.set(id, { replyType, sentAt: performance.now(), resolve: resolve as (m: TokenizerMessage) => void, reject, ...(onStage ? { onStage } : {}) });
      if (!this.process.send({ ...body, id })) {
        this.pending.delete(id);
        reject(this.exitError(this.exit ?? { code: null, signal: null }));
      }
    });
  }

  private receive(raw: unknown): void {
    const parsed = tokenizerMessageSchema.safeParse(raw);
    if (!parsed.success) {
      this.onProtocolError(`tokenizer sent a malformed message: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
      return;
    }
    const message = parsed.data;
    if (message.id === null) {
      this.onProtocolError(`tokenizer error without a request: ${message.type === 'error' ? message.message : message.type}`);
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) {
      this.onProtocolError(`tokenizer replied to unknown request ${message.id} (${message.type})`);
      return;
    }
    if (message.type === 'stage') {
      pending.onStage?.(message.stage);
      return;
    }
    this.pending.delete(message.id);
    if (message.type === 'error') pending.reject(new TokenizerError(message.message, message.code));
    else if (message.type === pending.replyType) pending.resolve(message);
    else pending.reject(new TokenizerError(`tokenizer answered ${message.type} where ${pending.replyType} was expected`));
  }
}
