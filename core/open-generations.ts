/**
 * Open generations: each answer still being generated (an HTTP stream or JSON answer not sent yet, a
 * chat answer streaming), so that a graceful stop can wait for them for a grace period and then end
 * each one still open its own way — the HTTP front with an SSE error event and `[DONE]` or a 503, the
 * chat by saving the answer as interrupted — and cancel its generation.
 */

export interface OpenGeneration<Reason> {
  /** Ends the answer because of `reason` (as its owner answers it) and cancels its generation. */
  cut(reason: Reason): void;
}

export interface DrainReport {
  /** Generations that ended by themselves within the grace period. */
  finished: number;
  /** Generations still open when it ran out (or was cut short), ended with the reason. */
  cut: number;
}

export class OpenGenerations<Reason> {
  private readonly open = new Set<OpenGeneration<Reason>>();
  private readonly emptyWaiters = new Set<() => void>();
  private ended = 0;

  /** Tracks `generation` until the returned function is called (when its answer has ended). */
  add(generation: OpenGeneration<Reason>): () => void {
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

  /**
   * Waits until every open generation has ended, `graceMs` has passed or `signal` aborts (a second
   * Ctrl-C), then cuts the ones left with `reason` and waits (at most `settleMs`) for their owners to
   * see them end, so that their cancellations reach the engines before anything is stopped.
   */
  async drain(graceMs: number, reason: Reason, signal?: AbortSignal, settleMs = 5000): Promise<DrainReport> {
    const endedBefore = this.ended;
    await this.empty(graceMs, signal);
    const finished = this.ended - endedBefore;
    const left = [...this.open];
    for (const generation of left) generation.cut(reason);
    await this.empty(settleMs);
    return { finished, cut: left.length };
  }

  /** Resolves when none is open, after `ms`, or when `signal` aborts, whichever comes first. */
  private async empty(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.open.size === 0 || signal?.aborted) return;
    let wake = (): void => {};
    const woken = new Promise<void>((resolve) => (wake = resolve));
    this.emptyWaiters.add(wake);
    const timer = setTimeout(wake, ms);
    signal?.addEventListener('abort', wake, { once: true });
    await woken;
    clearTimeout(timer);
    signal?.removeEventListener('abort', wake);
    this.emptyWaiters.delete(wake);
  }
}
