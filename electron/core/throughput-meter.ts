/** Tokens generated per second over a sliding window, for the dashboard and /metrics. */

export class ThroughputMeter {
  private readonly samples: { at: number; tokens: number }[] = [];

  constructor(private readonly windowMs = 10_000) {}

  record(tokens: number, at = Date.now()): void {
    this.samples.push({ at, tokens });
    this.prune(at);
  }

  tokensPerSecond(now = Date.now()): number {
    this.prune(now);
    const total = this.samples.reduce((sum, s) => sum + s.tokens, 0);
    return (total * 1000) / this.windowMs;
  }

  private prune(now: number): void {
    while (this.samples.length && this.samples[0]!.at < now - this.windowMs) this.samples.shift();
  }
}
