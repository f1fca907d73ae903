/** Pure unit tests of the heal policy and the watchdog's silence clock (no engines). */
import { describe, expect, it } from 'vitest';
import { decideHeal } from '../../core/replicas/heal-policy.js';
import { SilenceClock } from '../../core/supervisor/silence-clock.js';

const policy = { cooldownMs: 1000, maxConsecutiveFailures: 3 };

describe('heal policy', () => {
  it('restarts at once a replica that stayed up a cooldown, and counts that failure as the first', () => {
    expect(decideHeal(policy, { consecutiveFailures: 2, lastStartAt: 0, lastReadyAt: 100 }, 5000)).toEqual({ kind: 'restart', delayMs: 0, failures: 1 });
  });

  it('backs off a crash loop, doubling from each start, then gives up', () => {
    // Died 200 ms after its start, never ready: wait until a cooldown after that start.
    expect(decideHeal(policy, { consecutiveFailures: 0, lastStartAt: 1000, lastReadyAt: 0 }, 1200)).toEqual({ kind: 'restart', delayMs: 800, failures: 1 });
    // Ready but up less than a cooldown: still consecutive; the second waits two cooldowns from its start.
    expect(decideHeal(policy, { consecutiveFailures: 1, lastStartAt: 3000, lastReadyAt: 3100 }, 3500)).toEqual({ kind: 'restart', delayMs: 1500, failures: 2 });
    expect(decideHeal(policy, { consecutiveFailures: 2, lastStartAt: 6000, lastReadyAt: 0 }, 6100)).toEqual({ kind: 'failed', failures: 3 });
  });
});

describe('silence clock', () => {
  it('counts an engine silent when core ticks on time and it does not answer', () => {
    const clock = new SilenceClock(1000, 0);
    expect(clock.tick(1000)).toBe(1000);
    expect(clock.tick(2000)).toBe(2000);
    clock.answered(2500);
    expect(clock.tick(3000)).toBe(500);
  });

  it('does not count core’s own stall as the engine’s silence', () => {
    const clock = new SilenceClock(1000, 0);
    clock.tick(1000);
    clock.answered(1000);
    // The main loop was blocked for 10 s: the next tick comes 11 s later, and the answer waiting in the channel was not read.
    expect(clock.tick(12_000)).toBeLessThanOrEqual(1000);
    // If the engine still says nothing while core runs on time, silence grows again.
    expect(clock.tick(13_000)).toBeLessThanOrEqual(2000);
    expect(clock.tick(14_000)).toBeGreaterThan(clock.tick(14_000) - 1);
  });
});
