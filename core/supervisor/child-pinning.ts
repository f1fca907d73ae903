/**
 * How a supervised child is pinned to its replica's cores, as the replica set gives it to both local
 * supervisors: the pin, called after the spawn and again once loaded, and the CPUs it pins to (none:
 * every CPU), which the engine supervisor reads before the spawn to size the child's thread pool.
 */
export interface ChildPinning {
  pin: (pid: number) => Promise<void>;
  cpus: () => readonly number[];
}

/** Pins a spawned child when there is a pinning and the child got a pid; otherwise nothing to do. */
export const pinChild = (pinning: ChildPinning | undefined, pid: number | undefined): Promise<void> =>
  pid !== undefined && pinning ? pinning.pin(pid) : Promise.resolve();
