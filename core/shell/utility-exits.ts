/**
 * Gives an engine that runs as an Electron utility process the reason it died. The process's own `exit`
 * event carries only an exit code; app's `child-process-gone` carries Electron's reason (`oom`, `crashed`,
 * `killed`, …) and the name the process was forked under. Each engine is forked under a name of its
 * own, and this pairs the two events whichever comes first: a non-zero exit waits up to `waitMs` for its
 * reason, and is reported without one when none comes (a clean exit, code 0, is reported at once).
 */
import type { EngineExit, EngineGoneReason } from '../engine/engine-process.js';

/** The part of app's `child-process-gone` details this reads. */
export interface ChildGoneDetails {
  type: string;
  reason: string;
  exitCode: number;
  name?: string;
}

/** Electron's `app`, as far as this uses it. */
export interface ChildGoneSource {
  on(event: 'child-process-gone', listener: (event: unknown, details: ChildGoneDetails) => void): unknown;
}

const GONE_REASONS: readonly string[] = [
  'clean-exit',
  'abnormal-exit',
  'killed',
  'crashed',
  'oom',
  'launch-failed',
  'integrity-failure',
  'memory-eviction',
] satisfies EngineGoneReason[];

interface Watched {
  reason?: EngineGoneReason;
  /** Set once the process has exited and waits for its reason. */
  report?: (reason?: EngineGoneReason) => void;
  timer?: NodeJS.Timeout;
}

export class UtilityExitReasons {
  private readonly watched = new Map<string, Watched>();
  private forked = 0;

  constructor(
    app: ChildGoneSource,
    private readonly waitMs = 1000,
  ) {
    app.on('child-process-gone', (_event, details) => this.onGone(details));
  }

  /** A name, unique in this process, to fork the next child under (utilityProcess's `serviceName`). */
  nextName(kind = 'engine'): string {
    const name = `Manifold ${kind} ${++this.forked}`;
    this.watched.set(name, {});
    return name;
  }

  /** Call on the process's `exit`: `report` gets its exit once, with Electron's reason when there is one. */
  exited(name: string, code: number, report: (exit: EngineExit) => void): void {
    const watched = this.watched.get(name) ?? {};
    const finish = (reason?: EngineGoneReason): void => {
      clearTimeout(watched.timer);
      this.watched.delete(name);
      report({ code, signal: null, ...(reason ? { reason } : {}) });
    };
    if (watched.reason || code === 0) return finish(watched.reason);
    watched.report = finish;
    watched.timer = setTimeout(() => finish(), this.waitMs);
    this.watched.set(name, watched);
  }

  private onGone(details: ChildGoneDetails): void {
    if (details.type !== 'Utility' || details.name === undefined || !GONE_REASONS.includes(details.reason)) return;
    const watched = this.watched.get(details.name);
    if (!watched) return;
    const reason = details.reason as EngineGoneReason;
    if (watched.report) watched.report(reason);
    else watched.reason = reason;
  }
}
