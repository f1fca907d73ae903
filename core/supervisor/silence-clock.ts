/**
 * How long an engine has been silent, as the watchdog may judge it: time during which core itself was
 * stalled (a blocked event loop cannot read the engine's answers) is not the engine's silence. Each tick
 * that comes later than the heartbeat says the loop was stalled for the excess, and the clock moves the
 * last answer forward by it, so a stall of the main process never kills a healthy engine.
 */
export class SilenceClock {
  private lastAnswer: number;
  private lastTick: number;

  constructor(
    private readonly heartbeatMs: number,
    now: number,
  ) {
    this.lastAnswer = now;
    this.lastTick = now;
  }

  answered(now: number): void {
    this.lastAnswer = now;
  }

  /** Called on each heartbeat tick; returns the engine's silence that counts. */
  tick(now: number): number {
    const stalled = now - this.lastTick - this.heartbeatMs;
    // A tick up to one heartbeat late is timer jitter; beyond that, the loop was not running.
    if (stalled > this.heartbeatMs) this.lastAnswer = Math.min(now, this.lastAnswer + stalled);
    this.lastTick = now;
    return now - this.lastAnswer;
  }
}
