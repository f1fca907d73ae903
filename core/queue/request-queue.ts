/**
 * Where a request waits: one core-held queue for every replica (not a FIFO inside each engine). A request
 * enters with an arrival sequence number and leaves when the dispatcher binds it to a replica, when it
 * waited longer than `timeoutMs`, or when its client goes away. The queue is bounded (`maxWaiting`): one
 * more is refused at once. A request that failed over re-enters with its old sequence number, so it is
 * back at its old place, ahead of everything that arrived after it.
 */
import { QueueFullError, QueueTimeoutError, RequestCancelledError } from './queue-errors.js';
import { QueueStats } from './queue-stats.js';

export interface QueueSettings {
  /** Requests that may wait at once; one more is refused (HTTP 429). */
  maxWaiting: number;
  /** How long a request may wait for a slot before it is refused (HTTP 503). */
  timeoutMs: number;
  /**
   * The longest a request is held back for the replica that holds its prefix while another has a free slot
   * (with measured rates, a hold lasts only as long as the prefill it saves: dispatch-plan.ts).
   */
  cacheHoldMs: number;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = { maxWaiting: 256, timeoutMs: 300_000, cacheHoldMs: 10_000 };

export interface Waiting<P> {
  /** Arrival order; kept when the request re-enters after a failover. */
  readonly seq: number;
  readonly payload: P;
  /** When it entered the queue this time (the cache hold and the wait histogram count from here). */
  readonly enqueuedAt: number;
}

interface Entry<P, B> extends Waiting<P> {
  resolve(binding: B): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  detach(): void;
}

export class RequestQueue<P, B> {
  readonly stats = new QueueStats();
  /** Waiting requests in sequence order. */
  private readonly entries: Entry<P, B>[] = [];
  private nextSeq = 0;

  constructor(
    private readonly settings: QueueSettings,
    /** Called whenever something entered (the dispatcher looks for a free slot). */
    private readonly onEnqueue: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.entries.length;
  }

  get limits(): QueueSettings {
    return this.settings;
  }

  /** The waiting requests, oldest first. */
  waiting(): readonly Waiting<P>[] {
    return this.entries;
  }

  /** A fresh arrival sequence number (a request keeps its own across failovers). */
  takeSeq(): number {
    return this.nextSeq++;
  }

  /**
   * Waits for a binding. Rejects with QueueFullError when `maxWaiting` are already waiting (unless
   * `reentering`: a failover is never refused for room), QueueTimeoutError after `timeoutMs`, or
   * RequestCancelledError when `signal` aborts.
   */
  wait(seq: number, payload: P, options: { signal?: AbortSignal | undefined; reentering?: boolean } = {}): Promise<B> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new RequestCancelledError());
    if (!options.reentering && this.entries.length >= this.settings.maxWaiting) {
      this.stats.noteRejected('full');
      return Promise.reject(new QueueFullError(this.settings.maxWaiting));
    }
    return new Promise<B>((resolve, reject) => {
      const abort = (): void => this.drop(entry, new RequestCancelledError());
      const entry: Entry<P, B> = {
        seq,
        payload,
        enqueuedAt: this.now(),
        resolve,
        reject,
        timer: setTimeout(() => {
          this.stats.noteRejected('timeout');
          this.drop(entry, new QueueTimeoutError(this.settings.timeoutMs));
        }, this.settings.timeoutMs),
        detach: () => {
          clearTimeout(entry.timer);
          signal?.removeEventListener('abort', abort);
        },
      };
      signal?.addEventListener('abort', abort, { once: true });
      let at = this.entries.length;
      while (at > 0 && this.entries[at - 1]!.seq > seq) at--;
      this.entries.splice(at, 0, entry);
      this.onEnqueue();
    });
  }

  /** Hands `binding` to a waiting request and removes it from the queue. */
  bind(waiting: Waiting<P>, binding: B): void {
    const entry = this.entries.find((e) => e === waiting);
    if (!entry) throw new Error(`request ${waiting.seq} is not waiting`);
    this.remove(entry);
    this.stats.noteWait(this.now() - entry.enqueuedAt);
    entry.resolve(binding);
  }

  /** Refuses one waiting request with `error` (no replica is left that could serve it). */
  refuse(waiting: Waiting<P>, error: Error): void {
    const entry = this.entries.find((e) => e === waiting);
    if (entry) this.drop(entry, error);
  }

  private drop(entry: Entry<P, B>, error: Error): void {
    if (!this.entries.includes(entry)) return;
    this.remove(entry);
    entry.reject(error);
  }

  private remove(entry: Entry<P, B>): void {
    entry.detach();
    this.entries.splice(this.entries.indexOf(entry), 1);
  }
}
