/**
 * Pacing a peer's stream (read-hold.ts, and peer-http's `read` answering 'pace'), on real Unix sockets
 * and a real HTTP server: while a socket's reads are held, what the peer writes waits in the kernel and
 * comes in one read once they resume; a stream read piece by piece ('more') is never held; a socket
 * that does not read is not held, and one closed while held is left alone.
 */
import { once } from 'node:events';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { connect, createServer, Socket } from 'node:net';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { postPeerStream, socketPeer, type PieceAnswer } from '../../core/remote/peer-http.js';
import { holdReads } from '../../core/remote/read-hold.js';
import { listenOnTestSocket } from '../helpers/unix-socket.js';

/** Writes `text` and resolves once the kernel has it (on a Unix socket, the reader's side has it too). */
const written = (to: Socket | ServerResponse, text: string): Promise<void> =>
  new Promise((resolve, reject) => void to.write(text, (error) => (error ? reject(error) : resolve())));

/** A connected pair: the server's end and the client's, the client reading into `received` unless `listen` is false. */
async function socketPair({ listen = true } = {}): Promise<{ server: Socket; client: Socket; received: string[] }> {
  const server = createServer();
  const path = await listenOnTestSocket(server);
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect(path);
  const received: string[] = [];
  if (listen) client.on('data', (piece: Buffer) => received.push(piece.toString()));
  await once(client, 'connect');
  const [end] = await accepted;
  onTestFinished(() => {
    client.destroy();
    end.destroy();
  });
  return { server: end, client, received };
}

const nextPiece = (client: Socket): Promise<string> => once(client, 'data').then(([piece]) => (piece as Buffer).toString());

describe("holding a socket's reads", () => {
  it('keeps what the peer writes meanwhile from this process, and reads it in one piece when resumed', async () => {
    const { server, client, received } = await socketPair();
    await written(server, 'first');
    expect(await nextPiece(client)).toBe('first');
    let resume: (() => void) | undefined;
    expect(holdReads(client, (r) => (resume = r))).toBe(true);
    for (const piece of ['a', 'b', 'c']) await written(server, piece);
    // Each write is in the kernel: unheld, each would have been read by now (a few turns later at most).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toEqual(['first']);
    const after = nextPiece(client);
    resume!();
    expect(await after).toBe('abc');
    // Reading goes on as before once resumed.
    const more = nextPiece(client);
    await written(server, 'd');
    expect(await more).toBe('d');
  });

  it('holds nothing on a socket that does not read (never connected, or its buffer full), and leaves a socket closed while held alone', async () => {
    expect(holdReads(new Socket(), () => expect.unreachable('nothing is held'))).toBe(false);

    const full = await socketPair({ listen: false });
    // Unread, the client's buffer fills, and Node stops reading it.
    const filled = new Promise<void>((resolve) =>
      full.client.on('readable', () => {
        if (full.client.readableLength >= full.client.readableHighWaterMark) resolve();
      }),
    );
    full.server.write(Buffer.alloc(1 << 20));
    await filled;
    expect(holdReads(full.client, () => expect.unreachable('nothing is held'))).toBe(false);

    const { client } = await socketPair();
    const handle = (client as unknown as { _handle: { readStart(): number } })._handle;
    const starts = vi.spyOn(handle, 'readStart');
    let resume: (() => void) | undefined;
    expect(holdReads(client, (r) => (resume = r))).toBe(true);
    client.destroy();
    await once(client, 'close');
    resume!();
    expect(starts).not.toHaveBeenCalled();
  });
});

describe("reading a peer's stream", () => {
  /** A server streaming one body (6 bytes long, or chunked), its pieces written when the test says. */
  async function streamingPeer({ chunked = false } = {}) {
    let respond: (res: ServerResponse) => void = () => {};
    const responding = new Promise<ServerResponse>((resolve) => (respond = resolve));
    const server = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream', ...(chunked ? {} : { 'content-length': '6' }) });
      res.flushHeaders();
      respond(res);
    });
    const path = await listenOnTestSocket(server);
    const stream = await postPeerStream(socketPeer(path), '/stream', '{}', new AbortController().signal);
    const response = await responding;
    return { stream, response, write: (text: string) => written(response, text) };
  }

  it("reads on at once after a piece answered 'more', and holds the reads for the gap after one answered 'pace'", async () => {
    const { stream, write } = await streamingPeer();
    const pieces: string[] = [];
    let waiter: (() => void) | null = null;
    const arrived = (): Promise<void> => new Promise((resolve) => (waiter = resolve));
    let resume: (() => void) | undefined;
    const reading = stream.read(
      (bytes) => {
        pieces.push(bytes.toString());
        waiter?.();
        const answers: Record<number, PieceAnswer> = { 1: 'more', 2: 'pace' };
        return answers[pieces.length] ?? 'more';
      },
      (r) => (resume = r),
    );
    let next = arrived();
    await write('1');
    await next;
    next = arrived();
    await write('2');
    await next;
    expect(pieces).toEqual(['1', '2']);
    expect(resume).toBeDefined();
    for (const piece of ['3', '4', '5']) await write(piece);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pieces).toEqual(['1', '2']);
    next = arrived();
    resume!();
    await next;
    expect(pieces).toEqual(['1', '2', '345']);
    await write('6');
    await reading;
    expect(pieces.join('')).toBe('123456');
  });

  // Within 2 s: a connection left unread would still close at the agent's 5 s idle timeout.
  it("frees a connection whose body ended in the read it held reads after, still reading: the peer's close is seen", { timeout: 2000 }, async () => {
    const { stream, response, write } = await streamingPeer();
    let arrivedFirst: () => void = () => {};
    const first = new Promise<void>((resolve) => (arrivedFirst = resolve));
    let holds = 0;
    // The piece that ends the body is answered 'pace', and the hold is never resumed by the reader.
    const reading = stream.read(
      (bytes) => {
        if (bytes.toString() === '12345') {
          arrivedFirst();
          return 'more';
        }
        return 'pace';
      },
      () => void holds++,
    );
    const serverSide = response.socket!;
    await write('12345');
    await first;
    response.end('6');
    await reading;
    expect(holds).toBe(1);
    // The server closes the idle connection: only a client that reads sees it and closes its side.
    serverSide.end();
    await once(serverSide, 'close');
  });

  it("reads on at once when a later piece of the same read is answered 'more' (the stream's last event)", async () => {
    const { stream, response, write } = await streamingPeer({ chunked: true });
    const pieces: string[] = [];
    let waiter: (() => void) | null = null;
    const arrived = (count: number): Promise<void> =>
      new Promise((resolve) => {
        waiter = () => pieces.length >= count && resolve();
      });
    const answers: Record<string, PieceAnswer> = { b: 'pace', c: 'more' };
    void stream.read(
      (bytes) => {
        pieces.push(bytes.toString());
        waiter?.();
        return answers[bytes.toString()] ?? 'more';
      },
      () => {}, // never resumed by the hold
    );
    let next = arrived(1);
    await write('a');
    await next;
    // Two chunks in one write: one read, two pieces, the first answered 'pace' and the second 'more'.
    next = arrived(3);
    response.cork();
    response.write('b');
    response.write('c');
    response.uncork();
    await next;
    next = arrived(4);
    await write('d');
    await next;
    expect(pieces).toEqual(['a', 'b', 'c', 'd']);
    response.end();
  });
});
