/**
 * How a local replica's supervisor times its child (the engine child's and the llama-server child's
 * alike): the options each may set, and the defaults of those it does not.
 */
export interface SupervisorTiming {
  /** How often the heartbeat asks a ready child whether it is alive (a ping; llama-server's `/health`). */
  heartbeatMs: number;
  /** A ready child that has not answered as alive for this long is hung. */
  hangTimeoutMs: number;
  /** Spawn plus load may take this long before the start fails. */
  loadTimeoutMs: number;
  /** How long a graceful stop (the engine's `shutdown`, llama-server's SIGTERM) may take before SIGKILL. */
  stopGraceMs: number;
}

export const DEFAULT_SUPERVISOR_TIMING: Readonly<SupervisorTiming> = { heartbeatMs: 1000, hangTimeoutMs: 10_000, loadTimeoutMs: 300_000, stopGraceMs: 5000 };

/** The timing a supervisor runs with: each option given, else its default. */
export function supervisorTiming(options: Partial<SupervisorTiming>): SupervisorTiming {
  return {
    heartbeatMs: options.heartbeatMs ?? DEFAULT_SUPERVISOR_TIMING.heartbeatMs,
    hangTimeoutMs: options.hangTimeoutMs ?? DEFAULT_SUPERVISOR_TIMING.hangTimeoutMs,
    loadTimeoutMs: options.loadTimeoutMs ?? DEFAULT_SUPERVISOR_TIMING.loadTimeoutMs,
    stopGraceMs: options.stopGraceMs ?? DEFAULT_SUPERVISOR_TIMING.stopGraceMs,
  };
}
