/**
 * The plain requests to a peer, on node:http(s) and its keep-alive agents: its address (a URL, or a
 * local server's Unix socket) and API key, a bounded GET (or POST) of a JSON answer, and the streamed
 * POST of a generation (postPeerStream); https certificates are verified as by default. A peer that
 * cannot be reached, or does not answer in time, is a RemoteLostError; any HTTP status is an answer for
 * the caller to judge. A stream's reader may pace it: hold the connection's reads for a gap after a
 * piece (read-hold.ts), so a fast stream's events come several to a read. llama-server (cpp-httplib)
 * closes a connection after a streamed answer without saying so, and the next request may go out on it
 * before its close is seen: a request reset on a reused connection before any answer never reached the
 * server, and is sent again (Node's documented `reusedSocket` retry) until it goes out on a fresh one.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { describePeerFailure, RemoteLostError } from './remote-errors.js';
import { parseJsonOr } from '../../common/parse-json.js';
import { STREAM_GAP_MS } from '../../common/turn-batch.js';
import { holdReads } from './read-hold.js';

export interface PeerAddress {
  /** Base URL without a trailing slash; for a peer on a Unix socket, `unix:<path>` (what messages call it). */
  readonly url: string;
  readonly apiKey: string | null;
  /** A local server's Unix socket, which requests go to instead of `url`. */
  readonly socketPath?: string;
}

/** The address of a local server listening on the Unix socket at `path`. */
export const socketPeer = (path: string): PeerAddress => ({ url: `unix:${path}`, apiKey: null, socketPath: path });

export function peerHeaders(peer: PeerAddress, json: boolean): Record<string, string> {
  return {
    accept: json ? 'application/json' : 'text/event-stream',
    ...(json ? {} : { 'content-type': 'application/json' }),
    ...(peer.apiKey !== null ? { authorization: `Bearer ${peer.apiKey}` } : {}),
  };
}

export interface PeerAnswer {
  readonly status: number;
  /** The parsed body; undefined when it is not JSON. */
  readonly body: unknown;
  /** Milliseconds from sending to the whole answer. */
  readonly roundTripMs: number;
}

/** A request to `path` of `peer`, not yet sent. */
function requestOf(peer: PeerAddress, method: 'GET' | 'POST', path: string, headers: OutgoingHttpHeaders): ClientRequest {
  if (peer.socketPath !== undefined) return httpRequest({ socketPath: peer.socketPath, path, method, headers });
  const url = new URL(`${peer.url}${path}`);
  return (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers });
}

/**
 * The most times a request reset on a reused connection is sent again. Each reset takes one dead
 * connection out of the agent's pool (several streams that ended together leave several there), and
 * a reset on a fresh connection is final; the bound only keeps the loop finite.
 */
const MAX_STALE_CONNECTION_RETRIES = 32;

/**
 * Sends `body` to `path` and resolves with the response once its headers came (its body unread);
 * `signal` cuts the request at any point (its reason is then the rejection).
 */
function send(
  peer: PeerAddress,
  method: 'GET' | 'POST',
  path: string,
  headers: OutgoingHttpHeaders,
  body: string | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const allHeaders = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  const attempt = (retriesLeft: number): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const request = requestOf(peer, method, path, allHeaders);
      const cut = (): void => void request.destroy(signal.reason instanceof Error ? signal.reason : new Error('the request was aborted'));
      if (signal.aborted) cut();
      signal.addEventListener('abort', cut, { once: true });
      const release = (): void => signal.removeEventListener('abort', cut);
      let answered = false;
      request.on('error', (error: Error & { code?: string }) => {
        release();
        if (answered) return;
        if (retriesLeft > 0 && request.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted) resolve(attempt(retriesLeft - 1));
        else reject(error);
      });
      request.once('response', (response) => {
        answered = true;
        response.once('end', release);
        response.once('close', release);
        resolve(response);
      });
      request.end(body);
    });
  return attempt(MAX_STALE_CONNECTION_RETRIES);
}

/** GETs `path` and reads its JSON; the whole answer must come within `timeoutMs`. `signal` abandons it (a stop). */
export function getPeerJson(peer: PeerAddress, path: string, timeoutMs: number, signal?: AbortSignal): Promise<PeerAnswer> {
  return requestPeerJson(peer, 'GET', path, undefined, timeoutMs, signal);
}

/** POSTs `body` as JSON to `path` and reads the JSON answer within `timeoutMs` (llama-server's slot actions). */
export function postPeerJson(peer: PeerAddress, path: string, body: unknown, timeoutMs: number): Promise<PeerAnswer> {
  return requestPeerJson(peer, 'POST', path, body, timeoutMs);
}

async function requestPeerJson(
  peer: PeerAddress,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<PeerAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const abandon = (): void => controller.abort();
  signal?.addEventListener('abort', abandon, { once: true });
  const sentAt = performance.now();
  const headers = { ...peerHeaders(peer, true), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) };
  try {
    const response = await send(peer, method, path, headers, body === undefined ? undefined : JSON.stringify(body), controller.signal);
    const text = await bodyText(response);
    return { status: response.statusCode ?? 0, body: parseJsonOr(text, undefined), roundTripMs: performance.now() - sentAt };
  } catch (error) {
    if (signal?.aborted) throw new RemoteLostError(peer.url, `${method} ${path} was abandoned (the link stopped)`);
    if (controller.signal.aborted)
      throw new RemoteLostError(peer.url, `${method} ${path} had no answer within ${timeoutMs} ms${method === 'GET' ? ' (timeouts.connectMs)' : ''}`);
    throw new RemoteLostError(peer.url, `cannot reach it (${method} ${path}): ${describePeerFailure(error)}`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abandon);
  }
}

/** A response's whole body as text; rejects when the connection breaks before its end. */
async function bodyText(response: IncomingMessage): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const piece of response) pieces.push(piece as Buffer);
  return Buffer.concat(pieces).toString('utf8');
}

/** A streamed answer: its status, then its body (a generation's events) read as it comes. */
export interface PeerStream {
  readonly status: number;
  /** The whole body as text (an error answer). */
  text(): Promise<string>;
  /**
   * Hands each piece of the body to `onBytes` as it arrives; resolves at the body's end or once
   * `onBytes` returns 'end' (the rest is drained, the connection kept); rejects when the connection
   * breaks or closes before the end, when `onBytes` throws (the connection is then cut), or on abort.
   * After a piece it answers 'pace' to, the connection is not read again until `hold` resumes it
   * (STREAM_GAP_MS by default; the caller's pacing decision should assume the same gap), so what the
   * peer writes meanwhile comes as one piece (read-hold.ts). A hold ends early when a later piece of the
   * same read is answered 'more' or 'end', or when the body ends or the connection closes; nothing is
   * held on a connection that is not reading.
   */
  read(onBytes: (bytes: Buffer) => PieceAnswer, hold?: (resume: () => void) => void): Promise<void>;
}

/** What a stream's reader wants after a piece: its last event came, more as it comes, or more a gap later. */
export type PieceAnswer = 'end' | 'more' | 'pace';

const holdForStreamGap = (resume: () => void): void => void setTimeout(resume, STREAM_GAP_MS);

/**
 * POSTs `body` (JSON text) to `path` asking for server-sent events. The body's pieces come as Buffers
 * off 'data' events, without a WHATWG stream's promise and copies per read — the relay's hot path, a
 * piece a token until the reader paces it (measured: docs/BENCHMARKS.md, peer part 1). Resolves once the
 * response headers came; `signal` cuts the request at any point (its reason is then the rejection).
 */
export async function postPeerStream(peer: PeerAddress, path: string, body: string, signal: AbortSignal): Promise<PeerStream> {
  return peerStreamOf(await send(peer, 'POST', path, peerHeaders(peer, false), body, signal));
}

function peerStreamOf(response: IncomingMessage): PeerStream {
  return {
    status: response.statusCode ?? 0,
    text: () => bodyText(response),
    read: (onBytes, hold = holdForStreamGap) =>
      new Promise<void>((resolve, reject) => {
        let settled = false;
        /** Resumes the reads held after a piece, while they are held. */
        let resumeHeld: (() => void) | null = null;
        const settle = (error?: Error): void => {
          // A body that ended in the read a hold followed frees its connection: it goes back to the pool reading.
          resumeHeld?.();
          if (settled) return;
          settled = true;
          response.off('data', onData);
          if (error) reject(error);
          else resolve();
        };
        const onData = (bytes: Buffer): void => {
          let answer: PieceAnswer;
          try {
            answer = onBytes(bytes);
          } catch (error) {
            settle(error as Error);
            response.destroy();
            return;
          }
          // The pieces of one read (the chunks of a chunked body, a TLS socket's records) come in one turn: one
          // hold for them all, unless a later one among them wants the rest at once (the stream's last event).
          if (answer !== 'pace') resumeHeld?.();
          else if (!resumeHeld) {
            holdReads(response.socket, (resume) => {
              const resumeThisHold = (): void => {
                if (resumeHeld !== resumeThisHold) return;
                resumeHeld = null;
                resume();
              };
              resumeHeld = resumeThisHold;
              hold(resumeThisHold);
            });
          }
          if (answer !== 'end') return;
          settle();
          // What follows the last event is the end of the body: read, so the connection goes back to the pool.
          response.resume();
        };
        response.on('data', onData);
        response.once('end', () => settle());
        response.on('error', (error) => settle(error));
        response.once('close', () => settle(new Error('the connection closed before the end of the stream')));
      }),
  };
}
