/**
 * Tokens the engines produced, counted in per-second buckets (by the wall-clock second they arrived in).
 * The dashboard's tokens/s is the last whole second's count — a burst shows at its real rate and the
 * figure falls to 0 one whole second after generation stops; /metrics' gauge is the mean of the last
 * `windowSeconds` whole seconds.
 */

export class ThroughputMeter {
  /** Tokens per second number (`floor(ms / 1000)`), the last `windowSeconds + 1` seconds. */
  private readonly buckets = new Map<number, number>();

  constructor(private readonly windowSeconds = 10) {}

  record(tokens: number, at = Date.now()): void {
    const second = Math.floor(at / 1000);
    this.buckets.set(second, (this.buckets.get(second) ?? 0) + tokens);
    this.prune(second);
  }

  /** Tokens produced in the last whole second before `now` (0 when none were). */
  lastSecond(now = Date.now()): number {
    const current = Math.floor(now / 1000);
    this.prune(current);
    return this.buckets.get(current - 1) ?? 0;
  }

  /** The mean tokens per second over the last `windowSeconds` seconds (the current one so far included). */
  tokensPerSecond(now = Date.now()): number {
    const current = Math.floor(now / 1000);
    this.prune(current);
    let total = 0;
    for (const [second, tokens] of this.buckets) if (second > current - this.windowSeconds) total += tokens;
    return total / this.windowSeconds;
  }

  private prune(current: number): void {
    for (const second of this.buckets.keys()) if (second < current - this.windowSeconds) this.buckets.delete(second);
  }
}
