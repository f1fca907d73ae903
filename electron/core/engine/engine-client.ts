/**
 * Core's side of the engine protocol for one engine child: sends requests with fresh ids (as built, from
 * typed values: the engine parses and defaults them), parses every message the child sends once
 * (parseEngineMessage), and settles each request from the replies that carry its id. When the child exits,
 * every pending request fails with EngineExitedError.
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
} from '../../../common/engine-protocol.js';
import type { Pool, PoolSizes, PrecheckVerdict, RebuildChange } from '../../../common/rebuild.js';
import type { EngineExit, EngineProcess } from './engine-process.js';

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

type RequestBody = EngineRequestInput extends infer R ? (R extends EngineRequestInput ? Omit<R, 'id'> : never) : never;

interface Pending {
  readonly replyType: EngineMessage['type'];
  resolve(message: EngineMessage): void;
  reject(error: Error): void;
  onEvent?(message: EngineMessage): void;
}

export class EngineClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private exit: EngineExit | undefined;
  readonly exited: Promise<EngineExit>;

  constructor(
    readonly process: EngineProcess,
    private readonly onProtocolError: (problem: string) => void = () => {},
  ) {
    process.onMessage((raw) => this.receive(raw));
    this.exited = new Promise((resolve) => {
      process.onExit((exit) => {
        this.exit = exit;
        const error = new EngineExitedError(exit);
        for (const pending of this.pending.values()) pending.reject(error);
        this.pending.clear();
        resolve(exit);
      });
    });
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  load(options: LoadOptionsInput, onProgress?: (stage: 'model' | 'context', progress: number) => void): Promise<ReadyInfo> {
    return this.call({ type: 'load', options }, 'ready', (m) => {
      if (m.type === 'progress') onProgress?.(m.stage, m.progress);
    }).then((m) => m.info);
  }

  generate(request: GenerateRequestInput, onTokens?: (chunk: TokenChunk) => void): GenerationHandle {
    const id = this.nextId++;
    let markStarted: (info: StartedInfo) => void = () => {};
    let failStart: (error: Error) => void = () => {};
    const started = new Promise<StartedInfo>((resolve, reject) => {
      markStarted = resolve;
      failStart = reject;
    });
    const done = this.call(
      { type: 'generate', request },
      'done',
      (m) => {
        if (m.type === 'started') markStarted({ slot: m.slot, reusedTokens: m.reusedTokens, queuedMs: m.queuedMs });
        else if (m.type === 'tokens') onTokens?.({ tokens: m.tokens, text: m.text });
      },
      id,
    ).then((m) => m.result);
    // `started` settles even for a request that ends without one (an error, or cancelled while queued).
    done.then(() => failStart(new Error('generation ended before it started')), failStart);
    started.catch(() => {});
    return {
      id,
      started,
      done,
      cancel: () => this.call({ type: 'cancel', target: id }, 'cancelled').then((m) => m.found),
    };
  }

  slots(): Promise<SlotView[]> {
    return this.call({ type: 'slots' }, 'slots').then((m) => m.slots);
  }

  activity(): Promise<Activity> {
    return this.call({ type: 'activity' }, 'activity').then((m) => m.activity);
  }

  precheck(change: RebuildChange): Promise<PrecheckVerdict> {
    return this.call({ type: 'precheck', change }, 'verdict').then((m) => m.verdict);
  }

  /** Rebuilds the pools `change` touches; `onTeardown` runs when the engine says it starts freeing them. */
  rebuild(change: RebuildChange, options: { skipPrecheck: boolean; onTeardown: () => void }): Promise<Rebuilt> {
    return this.call({ type: 'rebuild', change, skipPrecheck: options.skipPrecheck }, 'rebuilt', (m) => {
      if (m.type === 'teardown') options.onTeardown();
    }).then((m) => m.result);
  }

  restore(pools: readonly Pool[], sizes: Partial<PoolSizes>): Promise<Rebuilt> {
    return this.call({ type: 'restore', pools: [...pools], sizes }, 'rebuilt').then((m) => m.result);
  }

  ping(): Promise<number> {
    return this.call({ type: 'ping' }, 'pong').then((m) => m.uptimeMs);
  }

  /** Asks the engine to free its model and exit; resolves when it has exited. */
  async shutdown(): Promise<EngineExit> {
    if (this.alive) await this.call({ type: 'shutdown' }, 'stopping').catch(() => undefined);
    return this.exited;
  }

  private call<T extends EngineMessage['type']>(
    body: RequestBody,
    replyType: T,
    onEvent?: (message: EngineMessage) => void,
    id = this.nextId++,
  ): Promise<EngineMessageOf<T>> {
    if (this.exit) return Promise.reject(new EngineExitedError(this.exit));
    return new Promise<EngineMessageOf<T>>((resolve, reject) => {
      this.pending.set(id, { replyType, resolve: resolve as (m: EngineMessage) => void, reject, ...(onEvent ? { onEvent } : {}) });
      if (!this.process.send({ ...body, id })) {
        this.pending.delete(id);
        reject(new EngineExitedError(this.exit ?? { code: null, signal: null }));
      }
    });
  }

  private receive(raw: unknown): void {
    const parsed = parseEngineMessage(raw);
    if (!parsed.success) {
      this.onProtocolError(`engine sent a malformed message: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
      return;
    }
    const message = parsed.data;
    if (message.id === null) {
      this.onProtocolError(`engine error without a request: ${message.type === 'error' ? message.message : message.type}`);
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) {
      this.onProtocolError(`engine replied to unknown request ${message.id} (${message.type})`);
      return;
    }
    if (message.type === 'error') {
      this.pending.delete(message.id);
      pending.reject(new EngineRequestError(message.code, message.message));
    } else if (message.type === pending.replyType) {
      this.pending.delete(message.id);
      pending.resolve(message);
    } else {
      pending.onEvent?.(message);
    }
  }
}
