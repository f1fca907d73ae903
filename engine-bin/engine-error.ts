/** The engine's typed failure: every error an engine reports carries one of the protocol's error codes. */
import type { EngineErrorCode } from '../common/engine-protocol.js';

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}
