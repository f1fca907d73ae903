/**
 * What the queue reports to the dashboard: the recent waits for a slot (for percentiles) and how many
 * requests were refused, by reason. `/metrics` keeps its own histogram of the waits, by replica
 * (`metrics/request-metrics.ts`).
 */

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
  readonly rejected: Record<RejectReason, number> = { full: 0, timeout: 0 };
  private readonly recent: number[] = [];

  noteWait(ms: number): void {
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
