/**
 * The supervisor of one replica's node-llama-cpp engine child: spawns it with its cards' env, loads the
 * model, watches it (a heartbeat ping; no answer within the bound means hung: it is killed — core's own
 * stalls do not count), stops it gracefully and then kills it, gives its log lines a level, and says why
 * it exited (with Electron's reason when the engine is a utility process). The life it shares with the
 * llama-server child's supervisor is supervisor/local-supervisor.ts. Each start is a new child; healing
 * (when and whether to start again) belongs to the replica set.
 */
import { availableParallelism } from 'node:os';
import type { LogLevel } from '../../common/contract.js';
import type { Activity, ReadyInfo } from '../../common/engine-protocol.js';
import { DEFAULT_PREFIX_CACHE_BYTES, type PrefixTier } from '../../common/prefix-cache.js';
import type { PoolSizes } from '../../common/rebuild.js';
import { EngineClient, EngineExitedError } from '../engine/engine-client.js';
import { engineChildEnv } from '../engine/engine-child-env.js';
import type { EngineExit, SpawnEngine } from '../engine/engine-process.js';
import { pinChild } from '../supervisor/child-pinning.js';
import { LocalSupervisor, type LocalSupervisorOptions } from '../supervisor/local-supervisor.js';
import type { ReplicaDriver, Rebuilder } from '../kind/replica-driver.js';

export interface EngineSupervisorOptions extends LocalSupervisorOptions {
  /** Starts the child process (fork under Node, utilityProcess in Electron). */
  spawn: SpawnEngine;
}

export class EngineSupervisor extends LocalSupervisor implements ReplicaDriver {
  private current: EngineClient | undefined;

  constructor(protected override readonly options: EngineSupervisorOptions) {
    super(options);
  }

  /** The live engine's client; undefined unless ready. */
  get client(): EngineClient | undefined {
    return this.stateValue === 'ready' ? this.current : undefined;
  }

  get pid(): number | undefined {
    return this.current?.process.pid;
  }

  /** Spawns a new child and loads the model; rejects (with the child gone) when it does not come up. */
  async start(): Promise<ReadyInfo> {
    this.beginStart();
    // The pinned CPUs are known before the spawn, which sizes the child's thread pool for them.
    const cpus = this.options.pinning?.cpus().length || availableParallelism();
    const child = this.options.spawn({ env: engineChildEnv(this.options.env, this.load.slots ?? 1, cpus) });
    const client = new EngineClient(child, (problem) => this.log(`protocol: ${problem}`, 'warn'));
    this.current = client;
    child.onLog((line) => this.log(line, engineLineLevel(line)));
    void client.exited.then((exit) => this.onChildExit(client, exit));
    this.log('starting');
    const pin = (): Promise<void> => pinChild(this.options.pinning, child.pid);
    const pinnedAtSpawn = pin();

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`loading took longer than ${this.timing.loadTimeoutMs} ms`)), this.timing.loadTimeoutMs);
    });
    try {
      const info = await Promise.race([client.load(this.load), timeout]);
      if (this.current !== client || !client.alive) throw new Error('the engine exited while loading');
      // Threads made during the load by threads pinned at spawn inherit the set; pinning again catches any other.
      await pinnedAtSpawn;
      await pin();
      this.stateValue = 'ready';
      this.watch(
        () => client.ping().then(() => true),
        () => client.process.kill('SIGKILL'),
        'no heartbeat',
      );
      this.log(`ready: ${info.sizes.slots} slots × ${info.sizes.contextSize} tokens on ${info.backend} in ${Math.round(info.loadMs)} ms`);
      this.emit('ready', info);
      return info;
    } catch (error) {
      this.startFailed(error);
      child.kill('SIGKILL');
      await client.exited;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Asks the engine to shut down, then kills it after the grace period. Resolves once it has exited. */
  async stop(): Promise<void> {
    const client = this.current;
    if (!client || !client.alive) return;
    this.life.stopRequested = true;
    this.stateValue = 'stopping';
    const grace = setTimeout(() => client.process.kill('SIGKILL'), this.timing.stopGraceMs);
    try {
      await client.shutdown();
    } finally {
      clearTimeout(grace);
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.current?.process.kill(signal);
  }

  /** The engine resizes itself live (engine-bin/model-resize.ts): the transaction speaks to its client. */
  rebuilder(_sizes: PoolSizes): Rebuilder {
    const client = this.client;
    if (!client) throw new Error(`replica ${this.options.replica} is ${this.stateValue}, not ready`);
    return { client, isEngineLost: (error) => error instanceof EngineExitedError };
  }

  /** After a resize that changed the slot layout the engine evaluates kept prefixes again in the background; its activity says how far. */
  activity(): Promise<Activity> {
    const client = this.client;
    return client ? client.activity() : Promise.reject(new EngineExitedError({ code: null, signal: null }));
  }

  /** Its prefix cache's tiers (engine-bin/prefix-cache.ts), as its load options set them. */
  prefixTierBudgets(): Record<PrefixTier, number> {
    const { ramBytes, diskBytes } = { ...DEFAULT_PREFIX_CACHE_BYTES, ...this.load.prefixCache };
    return { ram: ramBytes, disk: diskBytes };
  }

  private onChildExit(client: EngineClient, exit: EngineExit): void {
    if (this.current !== client) return;
    const crash = { kind: 'crashed' as const, code: exit.code, signal: exit.signal, ...(exit.reason ? { reason: exit.reason } : {}) };
    this.emit('exit', this.exited(this.life.exitReason(crash)));
  }
}

/**
 * The level of a line the engine printed: llama.cpp's warnings and errors, an uncaught failure; the rest is debug (the log file, the dashboard's
 * engine output).
 */
export function engineLineLevel(line: string): LogLevel {
  const llama = /^llama\.cpp (\w+):/.exec(line)?.[1];
  if (llama === 'warn') return 'warn';
  if (llama === 'error' || llama === 'fatal' || /^(uncaught exception|unhandled rejection):/.test(line)) return 'error';
  return 'debug';
}
