/**
 * The heartbeat of a supervised child, as both local replica supervisors watch theirs: every `everyMs` it
 * asks the child whether it is alive (one question at a time: the engine child's ping, llama-server's
 * `/health`) and counts the child's silence on a SilenceClock, so a stall of core's own event loop is
 * never the child's. Once the silence passes `hangAfterMs` it calls `onHung` once and beats no more: the
 * supervisor kills the child there. Returns the stop, for the child's exit.
 */
import { SilenceClock } from './silence-clock.js';

export interface HeartbeatOptions {
  everyMs: number;
  hangAfterMs: number;
  /** Resolves true when the child answered as alive; false or a rejection is silence. */
  alive: () => Promise<boolean>;
  onHung: (silentMs: number) => void;
}

export function startHeartbeat(options: HeartbeatOptions): () => void {
  const silence = new SilenceClock(options.everyMs, performance.now());
  let outstanding = false;
  const timer = setInterval(() => {
    const silentMs = Math.round(silence.tick(performance.now()));
    if (silentMs > options.hangAfterMs) {
      clearInterval(timer);
      options.onHung(silentMs);
      return;
    }
    if (outstanding) return;
    outstanding = true;
    options
      .alive()
      .then(
        (answered) => {
          if (answered) silence.answered(performance.now());
        },
        () => {},
      )
      .finally(() => {
        outstanding = false;
      });
  }, options.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
