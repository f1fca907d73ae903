/**
 * A child's one link to its parent (the engine's and the tokenizer's): Node's IPC channel under
 * `child_process.fork`, or Electron's `process.parentPort` under `utilityProcess`. Everything else in a
 * child sees only this interface. It counts replies handed to the channel and not yet flushed (the
 * engine's activity reports them as undrained_replies). The messages sent in one event-loop turn go as
 * one IPC message (TurnBatch): the message itself when it is alone, an array of them when several are
 * ready together (the tokens of slots decoded in one step), which core's request channel takes apart.
 * A message sent for after the gap (a stream's tokens after its first) goes at most STREAM_GAP_MS
 * after the batch before it, with whatever else is ready by then: each IPC message is a socket write
 * and a wake-up of core, which the engine's thread pays between two decode steps (~40–60 µs a token on
 * the 2-core VM the benchmarks run on), so a fast stream sends a few tokens a message instead of one; a
 * stream slower than one token a gap goes token by token as before. A stream's first token goes `now`,
 * not at its turn's end: the rest of that turn is node-llama-cpp setting up the next token, which held
 * the first one back by ~0.15 ms (a one-off trace of a 16-token prompt).
 */
import type { EngineMessage } from '../common/engine-protocol.js';
import { STREAM_GAP_MS, TurnBatch, type HandOnAt } from '../common/turn-batch.js';

export interface ParentTransport<Message> {
  /**
   * `at`: `turn` unless given; `gap`: it may be held up to STREAM_GAP_MS after the last batch (a stream's
   * later tokens); `now`: it goes at once (a stream's first token).
   */
  send(message: Message, at?: HandOnAt): void;
  /** Replies given to the channel that it has not flushed yet. */
  readonly undrained: number;
  onMessage(listener: (raw: unknown) => void): void;
  /** Called once when the parent is gone (channel closed or the process re-parented). */
  onParentGone(listener: () => void): void;
}

export type EngineTransport = ParentTransport<EngineMessage>;

/** Electron's utilityProcess parent port, present only when the engine runs under Electron. */
interface ParentPort {
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}

const PARENT_POLL_MS = 1000;

export function connectToParent<Message = EngineMessage>(): ParentTransport<Message> {
  const parentPort = (process as unknown as { parentPort?: ParentPort }).parentPort;
  let undrained = 0;
  const goneListeners: (() => void)[] = [];
  let gone = false;
  const declareGone = (): void => {
    if (gone) return;
    gone = true;
    for (const listener of goneListeners) listener();
  };
  // A parent killed with SIGKILL closes the channel; polling the parent pid covers a transport that does not say so.
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) declareGone();
  }, PARENT_POLL_MS).unref();

  /** One IPC message for the messages of one turn: alone as itself, several as an array. */
  const batched = (post: (message: unknown) => void): ((message: Message, at?: HandOnAt) => void) => {
    const batch = new TurnBatch<Message>((messages) => post(messages.length === 1 ? messages[0] : messages), setImmediate, {
      minGapMs: STREAM_GAP_MS,
      now: () => performance.now(),
      after: (flush, ms) => {
        const timer = setTimeout(flush, ms);
        return () => clearTimeout(timer);
      },
    });
    return (message, at) => batch.push(message, at);
  };

  if (parentPort) {
    return {
      send: batched((message) => parentPort.postMessage(message)),
      get undrained() {
        return 0;
      },
      onMessage: (listener) => parentPort.on('message', (event) => listener(event.data)),
      onParentGone: (listener) => goneListeners.push(listener),
    };
  }
  if (!process.send) throw new Error('engine-bin must be started with an IPC channel (child_process.fork or utilityProcess)');
  process.on('disconnect', declareGone);
  return {
    send: batched((message) => {
      if (!process.connected) return;
      undrained++;
      process.send!(message, undefined, {}, () => {
        undrained--;
      });
    }),
    get undrained() {
      return undrained;
    },
    onMessage: (listener) => process.on('message', listener),
    onParentGone: (listener) => goneListeners.push(listener),
  };
}
