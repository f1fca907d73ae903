/** Why a request left the queue without a replica: the queue was full, it waited too long, or its client went away. */

/** `maxWaiting` requests were already waiting (HTTP 429 with Retry-After). */
export class QueueFullError extends Error {
  constructor(readonly maxWaiting: number) {
    super(`the server is busy: ${maxWaiting} requests are already waiting for a slot (queue.maxWaiting); retry later`);
    this.name = 'QueueFullError';
  }
}

/** The request waited `timeoutMs` without a free slot (HTTP 503 with Retry-After). */
export class QueueTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no slot became free within ${timeoutMs} ms (queue.timeoutMs); the request was not started`);
    this.name = 'QueueTimeoutError';
  }
}

/** The client cancelled the request (or went away) while it waited. */
export class RequestCancelledError extends Error {
  constructor() {
    super('the request was cancelled while it waited for a slot');
    this.name = 'RequestCancelledError';
  }
}
