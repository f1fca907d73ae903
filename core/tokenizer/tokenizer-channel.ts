/**
 * Core's side of the tokenizer protocol for one tokenizer child, on the shared request channel
 * (engine/request-channel.ts): messages are parsed with the protocol's schemas, an error reply becomes a
 * TokenizerError with the child's code, `stage` messages go to the caller's `onStage`, and any other
 * answer than the one asked for fails the request. When the child exits, every pending request fails with
 * the error the supervisor makes for that exit. It also says how long the oldest unanswered request has
 * waited (the supervisor's hang check).
 */
import {
  tokenizerMessageSchema,
  type OpenStage,
  type TokenizerMessage,
  type TokenizerMessageOf,
  type TokenizerRequest,
} from '../../common/tokenizer-protocol.js';
import type { EngineExit, EngineProcess } from '../engine/engine-process.js';
import { RequestChannel, type RequestBody } from '../engine/request-channel.js';
import { TokenizerError } from './tokenizer-errors.js';

export type TokenizerRequestBody = RequestBody<TokenizerRequest>;

export class TokenizerChannel {
  private readonly requests: RequestChannel<TokenizerMessage, TokenizerRequestBody>;
  readonly exited: Promise<EngineExit>;

  constructor(
    readonly process: EngineProcess,
    /** The error every pending request fails with when the child exits. */
    exitError: (exit: EngineExit) => Error,
    onProtocolError: (problem: string) => void,
  ) {
    this.requests = new RequestChannel(process, {
      peer: 'tokenizer',
      parse: (raw) => tokenizerMessageSchema.safeParse(raw),
      replyError: (reply) => new TokenizerError(reply.message, reply.code),
      exitError,
      onProtocolError,
    });
    this.exited = this.requests.exited;
  }

  get alive(): boolean {
    return this.requests.alive;
  }

  /** How long the oldest unanswered request has waited; 0 when none is waiting. */
  oldestWaitMs(now = performance.now()): number {
    return this.requests.oldestWaitMs(now);
  }

  call<T extends TokenizerMessage['type']>(body: TokenizerRequestBody, replyType: T, onStage?: (stage: OpenStage) => void): Promise<TokenizerMessageOf<T>> {
    return this.requests.call(body, replyType, (message, fail) => {
      if (message.type === 'stage') onStage?.(message.stage);
      else fail(new TokenizerError(`tokenizer answered ${message.type} where ${replyType} was expected`));
    });
  }
}
