/** An HTTP failure with its status and an OpenAI-style error body; anything else thrown becomes a 500. */
import type { ServerResponse } from 'node:http';
import type { z } from 'zod';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Extra response headers (Retry-After on 429 and 503). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** A 400 naming the first field a zod schema refused. */
export function schemaError(error: z.ZodError): HttpError {
  const issue = error.issues[0]!;
  const field = issue.path.join('.');
  return new HttpError(400, field ? `${field}: ${issue.message}` : issue.message, 'invalid_request_error', field || null);
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
  sendJson(res, error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } }, { ...error.headers });
}
