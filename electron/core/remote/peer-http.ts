/**
 * The plain requests to a peer, on Node's global fetch (undici; https certificates are verified as by
 * default): its address and API key, and a bounded GET of a JSON answer. A peer that cannot be reached,
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
export async function getPeerJson(peer: PeerAddress, path: string, timeoutMs: number, signal?: AbortSignal): Promise<PeerAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const abandon = (): void => controller.abort();
  signal?.addEventListener('abort', abandon, { once: true });
  const sentAt = performance.now();
  try {
    const response = await fetch(`${peer.url}${path}`, { headers: peerHeaders(peer, true), signal: controller.signal });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body, roundTripMs: performance.now() - sentAt };
  } catch (error) {
    if (signal?.aborted) throw new RemoteLostError(peer.url, `GET ${path} was abandoned (the link stopped)`);
    if (controller.signal.aborted) throw new RemoteLostError(peer.url, `GET ${path} had no answer within ${timeoutMs} ms (timeouts.connectMs)`);
    throw new RemoteLostError(peer.url, `cannot reach it (GET ${path}): ${describeFetchFailure(error)}`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', abandon);
  }
}
