/**
 * The engine's message loop: parses every request with the protocol's schemas, dispatches it to the
 * model host, and answers with replies tagged by the request's id. A bad or unknown message, or a failing
 * request, gets a typed error reply; nothing a parent sends can make the engine die. A stream's tokens
 * after its first may wait a moment to travel with the next ones (transport.ts).
 */
import type { HandOnAt } from '../common/turn-batch.js';
import { ENGINE_REQUEST_TYPES, engineRequestSchema, type EngineMessage, type EngineRequest } from '../common/engine-protocol.js';
import { describeBadMessage } from './bad-message.js';
import { stopWithin } from './child-main.js';
import { EngineError } from './engine-error.js';
import type { ModelHost } from './model-host.js';
import type { EngineTransport } from './transport.js';

/** How long freeing the model may take before the engine exits regardless. */
const STOP_DEADLINE_MS = 3000;

export class EngineServer {
  private readonly started = performance.now();
  private readonly generating = new Set<number>();

  constructor(
    private readonly transport: EngineTransport,
    private readonly host: ModelHost,
    private readonly exit: (code: number) => void,
  ) {}

  handle(raw: unknown): void {
    const parsed = engineRequestSchema.safeParse(raw);
    if (!parsed.success) {
      this.send({ type: 'error', ...describeBadMessage(raw, parsed.error.issues, ENGINE_REQUEST_TYPES) });
      return;
    }
    this.dispatch(parsed.data).catch((error: unknown) => {
      const id = parsed.data.id;
      if (error instanceof EngineError) this.send({ type: 'error', id, code: error.code, message: error.message });
      else this.send({ type: 'error', id, code: 'generate_failed', message: `unexpected engine error: ${String(error)}` });
    });
  }

  private async dispatch(request: EngineRequest): Promise<void> {
    const { id } = request;
    switch (request.type) {
      case 'load': {
        const info = await this.host.load(request.options, (stage, progress) => this.send({ type: 'progress', id, stage, progress }));
        this.send({ type: 'ready', id, info });
        return;
      }
      case 'generate': {
        if (this.generating.has(id)) throw new EngineError('bad_message', `request id ${id} is already generating`);
        this.generating.add(id);
        try {
          let firstTokens = true;
          const result = await this.host.generate(id, request.request, {
            started: (info) => this.send({ type: 'started', id, ...info }),
            tokens: (chunk) => {
              this.send({ type: 'tokens', id, ...chunk }, firstTokens ? 'now' : 'gap');
              firstTokens = false;
            },
          });
          this.send({ type: 'done', id, result });
        } finally {
          this.generating.delete(id);
        }
        return;
      }
      case 'embed':
        this.send({ type: 'embeddings', id, vectors: await this.host.embed(request.inputs) });
        return;
      case 'cancel':
        this.send({ type: 'cancelled', id, found: this.host.cancel(request.target) });
        return;
      case 'slots':
        this.send({ type: 'slots', id, slots: this.host.slotsView() });
        return;
      case 'activity':
        this.send({ type: 'activity', id, activity: this.host.activity(this.transport.undrained) });
        return;
      case 'ping':
        this.send({ type: 'pong', id, uptimeMs: performance.now() - this.started });
        return;
      case 'shutdown':
        this.send({ type: 'stopping', id });
        await this.stop(0);
        return;
      case 'precheck':
        this.send({ type: 'verdict', id, verdict: await this.host.precheck(request.change) });
        return;
      case 'rebuild': {
        const result = await this.host.rebuild(request.change, request.skipPrecheck, () => this.send({ type: 'teardown', id }));
        this.send({ type: 'rebuilt', id, result });
        return;
      }
      case 'restore':
        this.send({ type: 'rebuilt', id, result: await this.host.restore(request.pools, request.sizes) });
    }
  }

  /** Frees the model and exits; used for shutdown and when the parent is gone. */
  stop(code: number): Promise<void> {
    return stopWithin(
      STOP_DEADLINE_MS,
      () => this.host.dispose(),
      () => this.exit(code),
    );
  }

  private send(message: EngineMessage, at: HandOnAt = 'turn'): void {
    this.transport.send(message, at);
  }
}
