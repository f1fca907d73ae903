/** A server listening on a Unix socket in a temp folder of its own, both gone when the test finishes. */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** Starts `server` on a fresh socket path and resolves with the path once it listens; the test's end closes it and its connections. */
export async function listenOnTestSocket(server: Server | HttpServer): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'manifold-test-socket-'));
  const path = join(dir, 's.sock');
  server.listen(path);
  await once(server, 'listening');
  onTestFinished(() => {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return path;
}
