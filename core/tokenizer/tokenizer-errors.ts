/**
 * The tokenizer's two failures, which callers answer differently: the model or the input cannot be
 * tokenized (a model that fails validation, a chat template that fails on these messages: the caller's
 * problem, a 400 on HTTP), or the tokenizer process is not there to answer (it crashed or hung under the
 * call, or crashed too often to be restarted: a 503).
 */
import type { TokenizerErrorCode } from '../../common/tokenizer-protocol.js';

export class TokenizerError extends Error {
  constructor(
    message: string,
    /** The child's error code; null for a failure core saw itself (the child died, a timeout). */
    readonly code: TokenizerErrorCode | null = null,
  ) {
    super(message);
    this.name = 'TokenizerError';
  }
}

export class TokenizerUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenizerUnavailableError';
  }
}

/** A JSON schema uses a keyword node-llama-cpp's JSON-schema grammar cannot express (common/json-schema-subset.ts): the caller's input. */
export class UnsupportedSchemaError extends Error {
  constructor(
    message: string,
    readonly keyword: string,
  ) {
    super(message);
    this.name = 'UnsupportedSchemaError';
  }
}
