/**
 * An HTTP failure with its status and an OpenAI-style error body, and request bodies parsed into one:
 * a body a schema refuses is a 400 whose message names the field, the value's problem and the limit
 * (`common/issue-words.ts`), never zod's list of issues.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { fieldName, firstIssueInWords, inWords, valueInWords } from '../../common/issue-words.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Extra response headers (`Retry-After`). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * A 400 naming the first field a zod schema refused (parsed with `inWords`, so its message is in words);
 * a field the (strict) schema does not know is named as the error's `param` itself.
 */
export function schemaError(error: z.ZodError): HttpError {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = fieldName([...issue.path, issue.keys[0]!]);
    const shown = /^[\w[\].]{1,60}$/.test(field) ? field : `${fieldName(issue.path) || 'the request body'}: a field named ${valueInWords(issue.keys[0])}`;
    const more = issue.keys.length > 1 ? ` (and ${issue.keys.length - 1} more)` : '';
    return new HttpError(
      400,
      `${shown}: not a parameter this server takes${more}; it refuses what it does not honour rather than ignore it`,
      'invalid_request_error',
      field,
    );
  }
  const { field, message } = firstIssueInWords(error, 'the request body');
  return new HttpError(400, message, 'invalid_request_error', field);
}

/** `raw` parsed by `schema`, or a 400 in words. */
export function parseRequest<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw, { error: inWords });
  if (!parsed.success) throw schemaError(parsed.error);
  return parsed.data;
}

/**
 * Any error as an HttpError, with no internals in its message: an HttpError as it is; a zod error that
 * escaped a boundary (a limit the request schema should have checked first) as a 400 naming the field,
 * logged; a request cut off by its client as a 400; anything else as a 500 with a reference to the
 * server log, where the error is written in full.
 */
export function toHttpError(error: unknown, log: (line: string) => void): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof z.ZodError) {
    const issue = error.issues[0]!;
    const field = fieldName(issue.path);
    log(`front: a request passed the request schema but not an inner one (${field || 'the request'}: ${issue.message})`);
    return new HttpError(400, `${field || 'the request'}: ${issue.message}`, 'invalid_request_error', field || null);
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ECONNRESET' || code === 'ECONNABORTED' || (error as Error | null)?.message === 'aborted') {
    return new HttpError(400, 'the request was cut off before its body arrived', 'invalid_request_error');
  }
  const reference = randomBytes(4).toString('hex');
  log(`front: internal error ${reference}: ${(error as Error | null)?.stack ?? String(error)}`);
  return new HttpError(500, `internal error (reference ${reference} in the server log)`, 'server_error');
}

/** The OpenAI error object, as a JSON body or an SSE `error` event carries it. */
export function errorBody(error: HttpError): { error: { message: string; type: string; param: string | null; code: string | null } } {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, error.status, errorBody(error), { ...error.headers });
}
