/**
 * Test helper: a TCP proxy on a loopback port in front of a real server, to stand between Manifold and a
 * remote replica and break the link as networks do. Modes: `pass` forwards; `stall` accepts and holds
 * connections and forwards nothing (existing ones go silent too; what was held flows once it passes
 * again); `drop` destroys every current connection and refuses new ones; `slow` delays each chunk by
 * `delayMs`. A side's graceful end (FIN) is passed on in order with its data, so a stall holds it too.
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

/** One direction of a connection: what came from one side, waiting to be delivered to the other in order. */
interface Direction {
  readonly to: Socket;
  /** Chunks, and null for the sender's end (FIN), which is held like data. */
  readonly queue: (Buffer | null)[];
  /** A slow delivery is pending. */
  busy: boolean;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  let delayMs = 0;
  let accepted = 0;
  const links = new Set<Link>();
  const directions = new Set<Direction>();

  const deliver = (direction: Direction, item: Buffer | null): void => {
    if (direction.to.destroyed) return;
    if (item === null) direction.to.end();
    else direction.to.write(item);
  };

  /** Delivers what is queued as the mode allows: all of it, one item per delay, or nothing. */
  const pump = (direction: Direction): void => {
    if (direction.busy || mode === 'stall' || mode === 'drop') return;
    const item = direction.queue.shift();
    if (item === undefined) return;
    if (mode === 'slow') {
      direction.busy = true;
      setTimeout(() => {
        direction.busy = false;
        deliver(direction, item);
        pump(direction);
      }, delayMs);
      return;
    }
    deliver(direction, item);
    pump(direction);
  };

  const forward = (from: Socket, to: Socket): void => {
    const direction: Direction = { to, queue: [], busy: false };
    directions.add(direction);
    from.on('data', (chunk: Buffer) => {
      direction.queue.push(chunk);
      pump(direction);
    });
    from.on('end', () => {
      direction.queue.push(null);
      pump(direction);
    });
    to.on('close', () => directions.delete(direction));
  };

  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    accepted++;
    if (mode === 'drop') {
      client.destroy();
      return;
    }
    const upstream = connect({ port: target.port, host: target.host, allowHalfOpen: true });
    const link = { client, upstream };
    links.add(link);
    // An abrupt failure of either side cuts both; a graceful end travels in order with the data.
    const cut = (): void => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut);
    upstream.on('close', () => links.delete(link));
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
      for (const direction of directions) pump(direction);
    },
    close: async () => {
      cutAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
