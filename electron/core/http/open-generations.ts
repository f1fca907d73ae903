/**
 * The front's open generations: each response still being generated (a stream, or a JSON answer not
 * sent yet), so that a graceful stop can wait for them for a grace period and then end each one still
 * open in its own wire format — a stream with an SSE error event and `[DONE]`, a JSON answer with a
 * 503 — and cancel its generation.
 */
import type { HttpError } from './http-error.js';

export interface OpenGeneration {
  /** Ends the response with `failure` (as the route answers it) and cancels the generation. */
  cut(failure: HttpError): void;
}

export interface DrainReport {
  /** Generations that ended by themselves within the grace period. */
  finished: number;
  /** Generations still open when it ran out, ended with the shutdown error. */
  cut: number;
}

export class OpenGenerations {
  private readonly open = new Set<OpenGeneration>();
  private readonly emptyWaiters = new Set<() => void>();
  private ended = 0;

  /** Tracks `generation` until the returned function is called (when its response has ended). */
  add(generation: OpenGeneration): () => void {
    this.open.add(generation);
    return () => {
      if (!this.open.delete(generation)) return;
      this.ended++;
      if (this.open.size === 0) for (const wake of this.emptyWaiters) wake();
    };
  }

  get size(): number {
    return this.open.size;
  }

  /** Waits up to `graceMs` for every open generation to end, then cuts the ones left with `failure`. */
  async drain(graceMs: number, failure: HttpError): Promise<DrainReport> {
    const endedBefore = this.ended;
    if (this.open.size > 0) {
      let wake = (): void => {};
      const empty = new Promise<void>((resolve) => (wake = resolve));
      this.emptyWaiters.add(wake);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([empty, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      this.emptyWaiters.delete(wake);
    }
    const finished = this.ended - endedBefore;
    const left = [...this.open];
    for (const generation of left) generation.cut(failure);
    return { finished, cut: left.length };
  }
}
