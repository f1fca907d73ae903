/**
 * The environment a node-llama-cpp engine child starts with: the replica's (its cards' visibility, the
 * config's `env`), and libuv's thread pool sized to the engine's slots.
 *
 * node-llama-cpp runs each decode and each sampling step as a job on libuv's pool, one after another for
 * one sequence. With libuv's default of four threads each job goes to the thread that has waited longest,
 * so every token wakes a cold thread, often on another core. Measured side by side on the 2-vCPU bench
 * machine (session 18, plain node-llama-cpp processes with the engine's context options, 256 tokens after
 * a 512-token prompt, alternating): one sequence decodes 7–23% faster on a pool of one thread than of four
 * (every one of 12 starts and 72 pairs), and no start drew the 20% slower life that one process in eight
 * drew on four; two sequences decode 0–12% faster on one or two threads. With more slots each sequence's
 * sampling may run at once, so the pool keeps up to libuv's four. On one CPU (an engine pinned to a core
 * that is one CPU, or a one-CPU machine) every thread takes turns on it, and one thread did a little worse
 * than four (0.96–1.00× over 6 starts, pinned): there the pool keeps libuv's four too.
 *
 * What the pool also runs waits its turn behind the tokens: the prefix cache's file moves (on a slot's own
 * way to its prefill) and an embedding request. The size is set at spawn: a live resize to more slots
 * keeps it until the engine is next started. A UV_THREADPOOL_SIZE the user set, in the replica's env or
 * core's own, is left as it is.
 */

/** libuv's own pool size, the most this sizing gives. */
export const LIBUV_DEFAULT_THREADPOOL = 4;

/** The threads libuv's pool gets in an engine with `slots` slots on `cpus` CPUs. */
export const engineThreadpoolSize = (slots: number, cpus: number): number =>
  cpus <= 1 ? LIBUV_DEFAULT_THREADPOOL : Math.min(Math.max(1, slots), LIBUV_DEFAULT_THREADPOOL);

/** The child's env: `replicaEnv`, with UV_THREADPOOL_SIZE set to `engineThreadpoolSize` unless the user set it, or left to libuv's default on one CPU. */
export function engineChildEnv(
  replicaEnv: Readonly<Record<string, string>>,
  slots: number,
  cpus: number,
  inherited: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  if (replicaEnv.UV_THREADPOOL_SIZE !== undefined || inherited.UV_THREADPOOL_SIZE !== undefined || cpus <= 1) return { ...replicaEnv };
  return { ...replicaEnv, UV_THREADPOOL_SIZE: String(engineThreadpoolSize(slots, cpus)) };
}
