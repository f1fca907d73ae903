/**
 * What every supervisor keeps of one supervised child's life (the engine child, the llama-server child,
 * the tokenizer child): whether a stop was asked, whether its watchdog found it hung, why its start
 * failed, and from these why it exited — stopped, hung, failed to load, or crashed, in that order.
 */
import type { ReadyInfo } from '../../common/engine-protocol.js';
import type { EngineGoneReason } from '../engine/engine-process.js';

export type ExitReason =
  | { kind: 'stopped' }
  | { kind: 'crashed'; code: number | null; signal: string | null; reason?: EngineGoneReason }
  | { kind: 'hung'; silentMs: number }
  | { kind: 'load_failed'; message: string }
  /** A remote replica stopped answering (its link reconnects by itself). */
  | { kind: 'unreachable'; message: string };

export type SupervisorState = 'idle' | 'starting' | 'ready' | 'stopping' | 'exited';

/** What a replica's driver announces, local or remote: ready (with what it loaded), and gone (with why). */
export interface DriverEvents {
  ready: [ReadyInfo];
  exit: [ExitReason];
}

export class ChildLife {
  /** A stop was asked: the exit is the stop's. */
  stopRequested = false;
  /** The watchdog killed the child after this much silence. */
  hung: { silentMs: number } | undefined;
  /** Why its start failed, once it did. */
  loadFailure: string | undefined;

  /** A new child: nothing is known of it yet. */
  reset(): void {
    this.stopRequested = false;
    this.hung = undefined;
    this.loadFailure = undefined;
  }

  /**
   * Why the child exited: the stop that was asked, the watchdog's kill, its failed start (or, `loading`
   * given, any exit before it was ready, in those words), else the crash as its process ended.
   */
  exitReason(crash: Extract<ExitReason, { kind: 'crashed' }>, loading?: string): ExitReason {
    if (this.stopRequested) return { kind: 'stopped' };
    if (this.hung) return { kind: 'hung', silentMs: this.hung.silentMs };
    const failed = this.loadFailure ?? loading;
    return failed !== undefined ? { kind: 'load_failed', message: failed } : crash;
  }
}

const GONE_REASON_WORDS: Record<EngineGoneReason, string> = {
  'clean-exit': 'exited cleanly',
  'abnormal-exit': 'exited abnormally',
  killed: 'killed',
  crashed: 'crashed',
  oom: 'out of memory',
  'launch-failed': 'failed to launch',
  'integrity-failure': 'failed a code integrity check',
  'memory-eviction': 'evicted to free memory',
};

export function describeExit(reason: ExitReason): string {
  switch (reason.kind) {
    case 'stopped':
      return 'stopped';
    case 'crashed': {
      const codes = `code ${reason.code ?? 'none'}, signal ${reason.signal ?? 'none'}`;
      return reason.reason ? `crashed: ${GONE_REASON_WORDS[reason.reason]} (reason ${reason.reason}, ${codes})` : `crashed (${codes})`;
    }
    case 'hung':
      return `hung (silent for ${reason.silentMs} ms)`;
    case 'load_failed':
      return `failed to load: ${reason.message}`;
    case 'unreachable':
      return `unreachable: ${reason.message}`;
  }
}
