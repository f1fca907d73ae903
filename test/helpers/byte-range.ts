/** Test helper: answers a GET or HEAD for `bytes` as a file server does (a `Range: bytes=a-b` gets a 206 with Content-Range); returns the part to send. */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function writeRangeHead(
  request: IncomingMessage,
  response: ServerResponse,
  bytes: Buffer,
  extraHeaders: Record<string, string> = {},
): { start: number; body: Buffer } {
  const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
  const size = bytes.length;
  const start = range ? Number(range[1]) : 0;
  const end = range && range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
  const body = bytes.subarray(start, end + 1);
  const headers = { 'content-type': 'application/octet-stream', 'content-length': String(body.length), 'accept-ranges': 'bytes', ...extraHeaders };
  if (range) response.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${size}` });
  else response.writeHead(200, headers);
  return { start, body };
}
