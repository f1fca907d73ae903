/**
 * When a dead replica is started again (pure; the replica set applies it). A replica that died after
 * staying up at least a cooldown is restarted at once. Otherwise the failure is consecutive: restart k
 * waits until `cooldown × 2^(k-1)` after the previous start (at most one restart per cooldown, doubling),
 * and after `maxConsecutiveFailures` in a row the replica is `failed` until the user restarts it.
 */

export interface HealPolicy {
  /** At most one restart per cooldown; each further consecutive failure doubles the wait. */
  cooldownMs: number;
  /** Consecutive failures (crashes before staying up a cooldown, or failed starts) before `failed`. */
  maxConsecutiveFailures: number;
}

export const DEFAULT_HEAL_POLICY: HealPolicy = { cooldownMs: 60_000, maxConsecutiveFailures: 5 };

/** What the policy needs to know of a replica's past starts. */
export interface StartHistory {
  /** Failures in a row before this one. */
  readonly consecutiveFailures: number;
  readonly lastStartAt: number;
  /** When it last became ready (before `lastStartAt` when the last start never got there). */
  readonly lastReadyAt: number;
}

export type HealDecision =
  { readonly kind: 'restart'; readonly delayMs: number; readonly failures: number } | { readonly kind: 'failed'; readonly failures: number };

export function decideHeal(policy: HealPolicy, history: StartHistory, now: number): HealDecision {
  const stayedUp = history.lastReadyAt >= history.lastStartAt && now - history.lastReadyAt >= policy.cooldownMs;
  const failures = stayedUp ? 1 : history.consecutiveFailures + 1;
  if (failures >= policy.maxConsecutiveFailures) return { kind: 'failed', failures };
  if (stayedUp) return { kind: 'restart', delayMs: 0, failures };
  const wait = history.lastStartAt + policy.cooldownMs * 2 ** (failures - 1) - now;
  return { kind: 'restart', delayMs: Math.max(0, wait), failures };
}
