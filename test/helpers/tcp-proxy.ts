/**
 * Test helper: a TCP proxy on a loopback port in front of a real server, to stand between Manifold and a
 * remote replica and break the link as networks do. Modes: `pass` forwards; `stall` accepts and holds
 * connections and forwards nothing (existing ones go silent too; what was held flows once it passes
 * again); `drop` destroys every current connection and refuses new ones; `slow` delays each chunk by
 * `delayMs`.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'pass' | 'stall' | 'drop' | 'slow';

interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
}

export interface TcpProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly mode: ProxyMode;
  /** Connections accepted since the proxy started. */
  readonly accepted: number;
  setMode(mode: ProxyMode, delayMs?: number): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  let delayMs = 0;
  let accepted = 0;
  const links = new Set<Link>();
  /** Chunks held while stalled, per direction, released in order when the link passes again. */
  const held = new Map<Socket, Buffer[]>();

  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      const queue = held.get(from);
      if (mode === 'stall' || (queue && queue.length > 0)) {
        held.set(from, [...(queue ?? []), chunk]);
        return;
      }
      if (mode === 'slow') {
        from.pause();
        setTimeout(() => {
          if (!to.destroyed) to.write(chunk);
          from.resume();
        }, delayMs);
        return;
      }
      if (!to.destroyed) to.write(chunk);
    });
  };

  const server: Server = createServer((client) => {
    accepted++;
    if (mode === 'drop') {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    const link = { client, upstream };
    links.add(link);
    const end = (): void => {
      links.delete(link);
      held.delete(client);
      held.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const cutAll = (): void => {
    for (const { client, upstream } of links) {
      client.destroy();
      upstream.destroy();
    }
  };

  const release = (): void => {
    for (const { client, upstream } of links) {
      for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
        const queue = held.get(from) ?? [];
        held.delete(from);
        for (const chunk of queue) if (!to.destroyed) to.write(chunk);
      }
    }
  };

  return {
    url: `http://127.0.0.1:${port}`,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    setMode(next, nextDelayMs = 0) {
      mode = next;
      delayMs = nextDelayMs;
      if (next === 'drop') cutAll();
      if (next === 'pass' || next === 'slow') release();
    },
    close: async () => {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
