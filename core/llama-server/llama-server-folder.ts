/**
 * Where one replica's `llama-server` child lives and listens: a private folder (mkdtemp, so 0700 and its
 * own user's) made at its first start and removed at close, holding its Unix socket `http.sock` and its
 * slot files (`slots/`, its `--slot-save-path`). The socket keeps every other process off the child's
 * API, which has no password, and lets the relay skip TCP. Windows (Node speaks named pipes there, not
 * AF_UNIX) and a path too long for a socket address get a free loopback port instead.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { socketPeer, type PeerAddress } from '../remote/peer-http.js';
import type { ListenAddress } from './llama-server-args.js';

/** sun_path is 108 bytes on Linux and 104 on macOS, with its terminating zero. */
const MAX_SOCKET_PATH_BYTES = 103;

/** Makes replica `replica`'s private folder, with its slot folder inside. */
export async function makeChildFolder(replica: number): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), `manifold-llama-server-r${replica}-`));
  await mkdir(slotFolderIn(folder));
  return folder;
}

/** Where the child saves and restores slot files. */
export const slotFolderIn = (folder: string): string => join(folder, 'slots');

/** Where a child whose private folder is `folder` listens, and the peer address that reaches it there. */
export async function listenIn(folder: string): Promise<{ listen: ListenAddress; peer: PeerAddress }> {
  const socketPath = join(folder, 'http.sock');
  if (process.platform === 'win32' || Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    const port = await freeLoopbackPort();
    return { listen: { port }, peer: { url: `http://127.0.0.1:${port}`, apiKey: null } };
  }
  // A killed child leaves its socket file behind, and llama-server does not bind over one.
  await rm(socketPath, { force: true });
  return { listen: { socketPath }, peer: socketPeer(socketPath) };
}

/** A port nobody listens on now (the child binds it right after; a lost race fails that start, which heals). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
