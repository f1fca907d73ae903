/**
 * The plain requests to a peer, on Node's global fetch (undici; https certificates are verified as by
 * default): its address and API key, and a bounded GET (or POST) of a JSON answer. A peer that cannot be reached,
 * or does not answer in time, is a RemoteLostError; any HTTP status is an answer for the caller to judge.
 */
import { describeFetchFailure, RemoteLostError } from './remote-errors.js';

export interface PeerAddress {
  /** Base URL without a trailing slash. */
  readonly url: string;
  readonly apiKey: string | null;
}

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

/** GETs `path` and reads its JSON; the whole answer must come within `timeoutMs`. `signal` abandons it (a stop). */
export function getPeerJson(peer: PeerAddress, path: string, timeoutMs: number, signal?: AbortSignal): Promise<PeerAnswer> {
  return requestPeerJson(peer, 'GET', path, undefined, timeoutMs, signal);
}

/** POSTs `body` as JSON to `path` and reads the JSON answer within `timeoutMs` (llama-server's slot actions). */
export function postPeerJson(peer: PeerAddress, path: string, body: unknown, timeoutMs: number): Promise<PeerAnswer> {
  return requestPeerJson(peer, 'POST', path, body, timeoutMs);
}

async function requestPeerJson(peer: PeerAddress, method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<PeerAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const abandon = (): void => controller.abort();
  signal?.addEventListener('abort', abandon, { once: true });
  const sentAt = performance.now();
  try {
    const response = await fetch(`${peer.url}${path}`, {
      method,
      headers: { ...peerHeaders(peer, true), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: controller.signal,
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, roundTripMs: performance.now() - sentAt };
  } catch (error) {
    if (signal?.aborted) throw new RemoteLostError(peer.url, `${method} ${path} was abandoned (the link stopped)`);
    if (controller.signal.aborted) throw new RemoteLostError(peer.url, `${method} ${path} had no answer within ${timeoutMs} ms${method === 'GET' ? ' (timeouts.connectMs)' : ''}`);
    throw new RemoteLostError(peer.url, `cannot reach it (${method} ${path}): ${describeFetchFailure(error)}`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abandon);
  }
}
