/**
 * The rebuild barrier (DESIGN §5.2): waits until an engine has no pending prefill, no running decode
 * and no undrained replies. Finished requests never hold it. When it does not come in time, the
 * refusal names what is still busy, not a count.
 */
import type { Activity } from '../../common/engine-protocol.js';

export type BusyWith = 'prefill' | 'decode' | 'undrained replies';

export function busyWith(activity: Activity): BusyWith[] {
  return [
    ...(activity.pending_prefill > 0 ? (['prefill'] as const) : []),
    ...(activity.running_decode > 0 ? (['decode'] as const) : []),
    ...(activity.undrained_replies > 0 ? (['undrained replies'] as const) : []),
  ];
}

export class BarrierTimeoutError extends Error {
  constructor(
    readonly busy: readonly BusyWith[],
    readonly timeoutMs: number,
  ) {
    super(`the engine was still busy with ${busy.join(', ')} after ${timeoutMs} ms`);
    this.name = 'BarrierTimeoutError';
  }
}

export interface BarrierOptions {
  timeoutMs: number;
  /** How often activity is asked for. */
  pollMs?: number;
}

/** Resolves once `readActivity` reports idle; rejects with BarrierTimeoutError after `timeoutMs`. */
export async function waitForIdle(readActivity: () => Promise<Activity>, { timeoutMs, pollMs = 20 }: BarrierOptions): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const busy = busyWith(await readActivity());
    if (busy.length === 0) return;
    if (Date.now() >= deadline) throw new BarrierTimeoutError(busy, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
