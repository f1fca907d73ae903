/**
 * How a remote replica's failures reach the dispatcher in the local engine's terms: a peer lost under a
 * request (refused or reset connection, a timeout, a 5xx, a stream cut short or garbled) is a
 * RemoteLostError, an EngineExitedError, so a request that had no token yet fails over; a peer that
 * refuses the request itself (a 4xx) is an EngineRequestError with the peer's message.
 */
import { EngineExitedError, EngineRequestError } from '../engine/engine-client.js';

export class RemoteLostError extends EngineExitedError {
  constructor(
    readonly url: string,
    readonly problem: string,
  ) {
    super({ code: null, signal: null });
    this.message = `${url}: ${problem}`;
    this.name = 'RemoteLostError';
  }
}

/** The words of a failed request: Node's message with its code (`connect ECONNREFUSED …`, `socket hang up (ECONNRESET)`). */
export function describePeerFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

/** What a peer's error body says: OpenAI's `{error: {message, type, code}}`, vLLM's flat `{message}`, FastAPI's `{detail}`. */
export function peerErrorWords(body: unknown): { message: string; type: string | null; code: string | number | null } {
  const record = (value: unknown): Record<string, unknown> | undefined =>
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  const top = record(body);
  const inner = record(top?.error) ?? top;
  const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
  const message =
    text(inner?.message) ?? text(top?.detail) ?? text(top?.error) ?? (body === undefined ? 'no error message' : JSON.stringify(body).slice(0, 500));
  const code = inner?.code;
  return { message, type: text(inner?.type), code: typeof code === 'string' || typeof code === 'number' ? code : null };
}

/** Whether a peer's refusal says the prompt does not fit its context (llama-server, Manifold, vLLM each word it their way). */
function saysContextExceeded(words: { message: string; type: string | null; code: string | number | null }): boolean {
  return (
    words.type === 'exceed_context_size_error' ||
    words.code === 'context_length_exceeded' ||
    /context (length|size|window)|maximum context/i.test(words.message)
  );
}

/** Whether a peer's refusal says the request's grammar does not parse (llama-server: "Failed to parse grammar"; Manifold names `grammar`). */
const saysBadGrammar = (words: { message: string }): boolean => /grammar/i.test(words.message);

/**
 * The error for a peer's error answer: `status` is the HTTP status, or null for an error event inside a
 * stream (then its own `code` decides). 5xx, 408 and 429 (the peer is down, slow or full) lose the
 * request to another replica; any other refusal is the request's own. An error event after the first
 * tokens (`afterTokens`) is the answer's failure on a peer that is still up (llama-server ending a stream
 * whose text its parser cannot read): a failed generation, never a lost replica.
 */
export function peerRefusal(url: string, status: number | null, body: unknown, afterTokens = false): RemoteLostError | EngineRequestError {
  const words = peerErrorWords(body);
  if (status === null && afterTokens)
    return new EngineRequestError('generate_failed', `${url} ended the answer with an error after its first tokens: ${words.message}`);
  const effective = status ?? (typeof words.code === 'number' ? words.code : words.type === 'server_error' || words.type === 'unavailable_error' ? 500 : 400);
  if (effective >= 500 || effective === 408 || effective === 429) return new RemoteLostError(url, `answered ${status ?? 'an error event'}: ${words.message}`);
  const code = saysContextExceeded(words) ? 'prompt_too_long' : saysBadGrammar(words) ? 'bad_grammar' : 'bad_message';
  return new EngineRequestError(code, `${url}: ${words.message}`);
}
