/**
 * What the queue reports: how long requests waited for a slot (a Prometheus-style histogram and the
 * recent waits for percentiles) and how many were refused, by reason.
 */

/** Upper bounds of the queue-wait histogram, in seconds. */
export const QUEUE_WAIT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;

/** Recent waits kept for the dashboard's percentiles. */
const RECENT_WAITS = 1024;

export type RejectReason = 'full' | 'timeout';

export interface QueueWaitSummary {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class QueueStats {
  /** Cumulative counts per bucket (the last one is +Inf). */
  readonly bucketCounts: number[] = Array.from({ length: QUEUE_WAIT_BUCKETS_S.length + 1 }, () => 0);
  waitSumSeconds = 0;
  waitCount = 0;
  readonly rejected: Record<RejectReason, number> = { full: 0, timeout: 0 };
  private readonly recent: number[] = [];

  noteWait(ms: number): void {
    const seconds = ms / 1000;
    this.waitSumSeconds += seconds;
    this.waitCount++;
    for (const [i, bound] of QUEUE_WAIT_BUCKETS_S.entries()) if (seconds <= bound) this.bucketCounts[i]!++;
    this.bucketCounts[QUEUE_WAIT_BUCKETS_S.length]!++;
    this.recent.push(ms);
    if (this.recent.length > RECENT_WAITS) this.recent.shift();
  }

  noteRejected(reason: RejectReason): void {
    this.rejected[reason]++;
  }

  get rejectedTotal(): number {
    return this.rejected.full + this.rejected.timeout;
  }

  /** Percentiles of the recent waits (zeros before any request waited). */
  summary(): QueueWaitSummary {
    const sorted = [...this.recent].sort((a, b) => a - b);
    const at = (q: number): number => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0);
    return { p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? 0 };
  }
}
