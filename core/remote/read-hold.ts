/**
 * Holding a socket's reads for a while, so that what a peer writes meanwhile wakes this process once, in
 * one read, instead of once a write. A relayed stream is the case: llama-server writes one event a token,
 * and every wake-up of the front to read one takes a core from the engine's threads (docs/BENCHMARKS.md,
 * peer part 1). Node has no public call for it: `socket.pause()` only stops 'data' events while the
 * stream goes on reading into its buffer, waking the process at every write until its highWaterMark
 * is buffered. So this stops the socket's handle itself (libuv's read stop, what Node calls when a
 * buffer is full) and leaves the stream's own state as it was, so Node neither starts it again nor knows
 * it stopped. Where the handle lacks those calls (another runtime), nothing is held and the caller reads
 * as before.
 */
import type { Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';

/** The calls of a socket's libuv stream handle this uses, and Node's own flag for whether it reads. */
interface ReadableHandle {
  reading: boolean;
  readStop(): number;
  readStart(): number;
}

function handleOf(socket: Socket): ReadableHandle | null {
  const handle = (socket as unknown as { _handle?: Partial<ReadableHandle> | null })._handle;
  return handle && typeof handle.readStop === 'function' && typeof handle.readStart === 'function' && typeof handle.reading === 'boolean'
    ? (handle as ReadableHandle)
    : null;
}

/** libuv's answer when a handle already reads: nothing to start. */
const ALREADY_READING = 'EALREADY';

/**
 * Stops reading `socket` until `until` calls the resume it is given; false (and nothing held) when the
 * socket is not reading now or its handle cannot be held. Reads start again only if Node still means
 * the socket to read and it is the same open socket: Node stopping it meanwhile (its buffer full), or
 * its close, wins. A start that fails destroys the socket with the error, as Node does when its own
 * start fails, so a held stream ends in an error rather than waiting forever.
 */
export function holdReads(socket: Socket, until: (resume: () => void) => void): boolean {
  const handle = handleOf(socket);
  if (!handle || !handle.reading || socket.destroyed) return false;
  if (handle.readStop() !== 0) return false;
  until(() => {
    if (socket.destroyed || handleOf(socket) !== handle || !handle.reading) return;
    const code = handle.readStart();
    if (code === 0) return;
    const name = getSystemErrorName(code);
    if (name === ALREADY_READING) return;
    handle.reading = false;
    socket.destroy(Object.assign(new Error(`read ${name}`), { code: name, errno: code, syscall: 'read' }));
  });
  return true;
}
