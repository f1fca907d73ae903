/**
 * The plain requests to a peer (peer-http.ts) on a real HTTP server on a Unix socket, for what a
 * llama-server does to kept-alive connections: it closes them after an answer without saying so, so
 * the agent's pool may hold several dead ones when the next request goes out. Here the server resets
 * every request that comes on a connection it already answered on: a request must go out again until
 * it gets a fresh connection, and a reset on a fresh connection is an error.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { getPeerJson, socketPeer } from '../../core/remote/peer-http.js';
import { RemoteLostError } from '../../core/remote/remote-errors.js';
import { listenOnTestSocket } from '../helpers/unix-socket.js';

/** A server answering `{ n }` (its count of answers), and resetting any request on a connection it answered on before. */
async function oneAnswerPerConnection(options: { resetFresh?: boolean } = {}): Promise<{ path: string; server: Server; resets: () => number }> {
  const answered = new WeakSet<Socket>();
  let answers = 0;
  let resets = 0;
  const server = createServer((req, res) => {
    req.resume();
    if (answered.has(req.socket) || options.resetFresh) {
      resets++;
      req.socket.destroy();
      return;
    }
    answered.add(req.socket);
    res.end(JSON.stringify({ n: ++answers }));
  });
  return { path: await listenOnTestSocket(server), server, resets: () => resets };
}

describe('a request to a peer that closes kept-alive connections without saying so', () => {
  it('goes out again on each dead pooled connection in turn until a fresh one answers', async () => {
    const { path, resets } = await oneAnswerPerConnection();
    const peer = socketPeer(path);
    // Three at once open three connections; each answers once and goes back to the pool, alive to the client.
    const first = await Promise.all([1, 2, 3].map(() => getPeerJson(peer, '/x', 5000)));
    expect(first.map((a) => a.status)).toEqual([200, 200, 200]);
    const next = await getPeerJson(peer, '/x', 5000);
    expect(next.status).toBe(200);
    expect(next.body).toEqual({ n: 4 });
    expect(resets()).toBeGreaterThanOrEqual(2);
  });

  it('fails with a clear error when a fresh connection is reset too', async () => {
    const { path } = await oneAnswerPerConnection({ resetFresh: true });
    await expect(getPeerJson(socketPeer(path), '/x', 5000)).rejects.toBeInstanceOf(RemoteLostError);
    await expect(getPeerJson(socketPeer(path), '/x', 5000)).rejects.toThrow(/cannot reach it \(GET \/x\): socket hang up/);
  });
});
