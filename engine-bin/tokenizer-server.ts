/**
 * The tokenizer child's message loop: parses every request with the tokenizer protocol's schemas and
 * serves them one at a time in the order they came (calls may be pipelined), each answered with a reply
 * tagged by its id. A bad or unknown message, or a failing request, gets a typed error reply.
 */
import { TOKENIZER_REQUEST_TYPES, tokenizerRequestSchema, type TokenizerMessage, type TokenizerRequest } from '../common/tokenizer-protocol.js';
import { describeBadMessage } from './bad-message.js';
import { stopWithin } from './child-main.js';
import { TokenizerFailure, type TokenizerHost } from './tokenizer-host.js';
import type { ParentTransport } from './transport.js';

/** How long freeing the model may take before the child exits regardless. */
const STOP_DEADLINE_MS = 2000;

export class TokenizerServer {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly transport: ParentTransport<TokenizerMessage>,
    private readonly host: TokenizerHost,
    private readonly exit: (code: number) => void,
  ) {}

  handle(raw: unknown): void {
    const parsed = tokenizerRequestSchema.safeParse(raw);
    if (!parsed.success) {
      this.transport.send({ type: 'error', ...describeBadMessage(raw, parsed.error.issues, TOKENIZER_REQUEST_TYPES) });
      return;
    }
    const request = parsed.data;
    this.queue = this.queue.then(() =>
      this.serve(request).catch((error: unknown) => {
        const failure = error instanceof TokenizerFailure ? error : new TokenizerFailure('internal_error', `unexpected tokenizer error: ${String(error)}`);
        this.transport.send({ type: 'error', id: request.id, code: failure.code, message: failure.message });
      }),
    );
  }

  private async serve(request: TokenizerRequest): Promise<void> {
    const { id } = request;
    const send = (message: TokenizerMessage): void => this.transport.send(message);
    switch (request.type) {
      case 'open': {
        const opened = await this.host.open(request, (stage) => send({ type: 'stage', id, stage }));
        send({ type: 'opened', id, ...opened });
        return;
      }
      case 'tokenize':
        send({ type: 'tokens', id, tokens: this.host.tokenize(request.text, request.special, request.addBos) });
        return;
      case 'tokenizePrompt':
        send({ type: 'tokens', id, tokens: this.host.tokenizePrompt(request.text) });
        return;
      case 'detokenize':
        send({ type: 'text', id, text: this.host.detokenize(request.tokens) });
        return;
      case 'pieces':
        send({ type: 'pieces', id, pieces: this.host.pieces(request.tokens) });
        return;
      case 'applyChatTemplate':
        send({
          type: 'templated',
          id,
          ...this.host.applyChatTemplate(request.messages, request.addGenerationPrompt, request.tools, request.answers, request.options),
        });
        return;
      case 'jsonSchemaGrammar':
        send({ type: 'grammar', id, grammar: await this.host.jsonSchemaGrammar(request.schema) });
        return;
      case 'shutdown':
        send({ type: 'stopping', id });
        await this.stop(0);
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
}
