/**
 * A bounded time series core keeps by itself: one sample taken every `intervalMs` (an unref'd timer),
 * the last `capacity` kept, so a dashboard that connects (or reconnects) draws the recent past at once
 * instead of starting empty.
 */

export class SampleSeries<T> {
  private readonly kept: T[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly take: () => T,
    readonly capacity: number,
    intervalMs = 1000,
  ) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  /** Takes one sample now (the timer's tick). */
  sample(): void {
    this.kept.push(this.take());
    if (this.kept.length > this.capacity) this.kept.splice(0, this.kept.length - this.capacity);
  }

  /** The kept samples, oldest first. */
  samples(): T[] {
    return [...this.kept];
  }

  close(): void {
    clearInterval(this.timer);
  }
}
