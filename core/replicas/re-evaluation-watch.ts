/**
 * Follows a node-llama-cpp engine's background re-evaluation of the prefixes a live resize kept when the
 * slot layout changed (engine-bin/slot-prefixes.ts): reads the engine's `activity` until its
 * `re_evaluation` is over (or the engine no longer answers) and hands each reading to `onProgress`,
 * ending with null; the replica view shows it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Activity, ReEvaluation } from '../../common/engine-protocol.js';

/** How often the engine is asked while it evaluates prefixes again. */
const POLL_MS = 200;

export async function followReEvaluation(
  engine: { activity(): Promise<Activity> },
  onProgress: (progress: ReEvaluation | null) => void,
  pollMs = POLL_MS,
): Promise<void> {
  for (;;) {
    const progress = await engine.activity().then(
      (activity) => activity.re_evaluation,
      () => null,
    );
    onProgress(progress);
    if (!progress) return;
    await delay(pollMs, undefined, { ref: false });
  }
}
