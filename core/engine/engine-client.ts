/**
 * Core's side of the engine protocol for one engine child, on the shared request channel
 * (request-channel.ts): requests are sent as built from typed values (the engine parses and defaults
 * them), every message the child sends is parsed once (parseEngineMessage), an error reply becomes an
 * EngineRequestError, and the events of a request (progress, started, tokens, teardown) go to its
 * caller. When the child exits, every pending request fails with EngineExitedError.
 */
import {
  parseEngineMessage,
  type Activity,
  type EngineErrorCode,
  type EngineMessage,
  type EngineMessageOf,
  type EngineRequestInput,
  type GenerateDone,
  type GenerateRequestInput,
  type LoadOptionsInput,
  type ReadyInfo,
  type Rebuilt,
  type SlotView,
} from '../../common/engine-protocol.js';
import type { Pool, PoolSizes, PrecheckVerdict, RebuildChange } from '../../common/rebuild.js';
import type { EngineExit, EngineProcess } from './engine-process.js';
import { RequestChannel, type RequestBody } from './request-channel.js';

export class EngineRequestError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EngineRequestError';
  }
}

export class EngineExitedError extends Error {
  constructor(readonly exit: EngineExit) {
    super(`engine exited (code ${exit.code ?? 'none'}, signal ${exit.signal ?? 'none'})`);
    this.name = 'EngineExitedError';
  }
}

export type StartedInfo = Omit<EngineMessageOf<'started'>, 'type' | 'id'>;
export type TokenChunk = Omit<EngineMessageOf<'tokens'>, 'type' | 'id'>;

export interface GenerationHandle {
  readonly id: number;
  /** Settles when the engine has given the request a slot. */
  readonly started: Promise<StartedInfo>;
  readonly done: Promise<GenerateDone>;
  /** Asks the engine to stop this generation; resolves whether the engine still knew it. */
  cancel(): Promise<boolean>;
}

export class EngineClient {
  /** node-llama-cpp applies a request's grammar (engine-bin/grammar-cache.ts) and reports token logprobs (engine-bin/token-logprobs.ts). */
  readonly takesGrammar = true;
  readonly takesLogprobs = true;
  private readonly channel: RequestChannel<EngineMessage, RequestBody<EngineRequestInput>>;
  readonly exited: Promise<EngineExit>;

  constructor(
    readonly process: EngineProcess,
    onProtocolError: (problem: string) => void = () => {},
  ) {
    this.channel = new RequestChannel(process, {
      peer: 'engine',
      parse: parseEngineMessage,
      replyError: (reply) => new EngineRequestError(reply.code, reply.message),
      exitError: (exit) => new EngineExitedError(exit),
      onProtocolError,
    });
    this.exited = this.channel.exited;
  }

  get alive(): boolean {
    return this.channel.alive;
  }

  load(options: LoadOptionsInput, onProgress?: (stage: 'model' | 'context', progress: number) => void): Promise<ReadyInfo> {
    return this.channel
      .call({ type: 'load', options }, 'ready', (m) => {
        if (m.type === 'progress') onProgress?.(m.stage, m.progress);
      })
      .then((m) => m.info);
  }

  generate(request: GenerateRequestInput, onTokens?: (chunk: TokenChunk) => void): GenerationHandle {
    const id = this.channel.newId();
    let markStarted: (info: StartedInfo) => void = () => {};
    let failStart: (error: Error) => void = () => {};
    const started = new Promise<StartedInfo>((resolve, reject) => {
      markStarted = resolve;
      failStart = reject;
    });
    const done = this.channel
      .call(
        { type: 'generate', request },
        'done',
        (m) => {
          if (m.type === 'started')
            markStarted({ slot: m.slot, reusedTokens: m.reusedTokens, queuedMs: m.queuedMs, ...(m.prefixCache ? { prefixCache: m.prefixCache } : {}) });
          else if (m.type === 'tokens') onTokens?.({ tokens: m.tokens, text: m.text, ...(m.logprobs ? { logprobs: m.logprobs } : {}) });
        },
        id,
      )
      .then((m) => m.result);
    // `started` settles even for a request that ends without one (an error, or cancelled while queued).
    done.then(() => failStart(new Error('generation ended before it started')), failStart);
    started.catch(() => {});
    return {
      id,
      started,
      done,
      cancel: () => this.channel.call({ type: 'cancel', target: id }, 'cancelled').then((m) => m.found),
    };
  }

  /** One embedding vector per input (lists of token ids), from the engine's embedding context. */
  embed(inputs: readonly (readonly number[])[]): Promise<number[][]> {
    return this.channel.call({ type: 'embed', inputs: inputs.map((input) => [...input]) }, 'embeddings').then((m) => m.vectors);
  }

  slots(): Promise<SlotView[]> {
    return this.channel.call({ type: 'slots' }, 'slots').then((m) => m.slots);
  }

  activity(): Promise<Activity> {
    return this.channel.call({ type: 'activity' }, 'activity').then((m) => m.activity);
  }

  precheck(change: RebuildChange): Promise<PrecheckVerdict> {
    return this.channel.call({ type: 'precheck', change }, 'verdict').then((m) => m.verdict);
  }

  /** Rebuilds the pools `change` touches; `onTeardown` runs when the engine says it starts freeing them. */
  rebuild(change: RebuildChange, options: { skipPrecheck: boolean; onTeardown: () => void }): Promise<Rebuilt> {
    return this.channel
      .call({ type: 'rebuild', change, skipPrecheck: options.skipPrecheck }, 'rebuilt', (m) => {
        if (m.type === 'teardown') options.onTeardown();
      })
      .then((m) => m.result);
  }

  restore(pools: readonly Pool[], sizes: Partial<PoolSizes>): Promise<Rebuilt> {
    return this.channel.call({ type: 'restore', pools: [...pools], sizes }, 'rebuilt').then((m) => m.result);
  }

  ping(): Promise<number> {
    return this.channel.call({ type: 'ping' }, 'pong').then((m) => m.uptimeMs);
  }

  /** Asks the engine to free its model and exit; resolves when it has exited. */
  async shutdown(): Promise<EngineExit> {
    if (this.alive) await this.channel.call({ type: 'shutdown' }, 'stopping').catch(() => undefined);
    return this.exited;
  }
}
