/**
 * The headless workstation: a run config started as a workstation with its front in front of it. The
 * `npm run serve` CLI, the desktop shell and the tests start it the same way. The front binds its port
 * first, so a port that is taken fails the start before any engine is spawned. `stop` is the graceful
 * stop (SIGTERM, Ctrl-C, the desktop's quit): nothing new is taken, running answers get a grace period,
 * those left are ended cleanly, then the engines are stopped.
 */
import { defaultDataDir } from './config/data-dir.js';
import { defaultEngineKind, ENGINE_KIND_VARIABLE } from './engine-kinds/default-engine-kind.js';
import { readCalibration, thisMachine } from './config/engine-calibration.js';
import os from 'node:os';
import type { ArenaFacts } from './arena/arena-plan.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, type RunConfig } from './config/run-config.js';
import { forkEngine, forkTokenizer, type SpawnEngine, type SpawnTokenizer } from './engine/engine-process.js';
import { GpuMonitor } from './gpu/gpu-report.js';
import { controlToken } from './control-token.js';
import { startFront, type Front, type FrontOptions } from './http/front-server.js';
import type { LogSink } from './logging/core-log.js';
import type { LogRotation } from './logging/log-file.js';
import type { DrainReport } from './open-generations.js';
import type { ReplicaSetOptions } from './replicas/replica-set.js';
import { Workstation, type WorkstationOptions } from './workstation.js';

export interface ServeOptions {
  front?: FrontOptions;
  /** Also hand each log line here (the file is written either way). */
  log?: LogSink;
  /** Core's rotating log file; default `<dataDir>/logs/manifold.log`, null for none. */
  logFile?: string | null;
  logRotation?: LogRotation;
  spawn?: SpawnEngine;
  /** Starts a model's tokenizer child; `child_process.fork` by default (utilityProcess under Electron). */
  spawnTokenizer?: SpawnTokenizer;
  tokenizerOptions?: WorkstationOptions['tokenizerOptions'];
  replicaOptions?: Partial<ReplicaSetOptions>;
  arenaFacts?: Partial<ArenaFacts>;
  /** Conversations, recent models and logs; default: `$XDG_DATA_HOME/manifold` (or ~/.local/share/manifold). */
  dataDir?: string;
  modelsDir?: string | null;
  /** Replace the control token kept in the data dir (serve's `--new-token`): open dashboards must use the new link. */
  newToken?: boolean;
  /** The graceful stop's grace period; default: the config's `shutdownGraceMs`, else 10 s. */
  shutdownGraceMs?: number;
}

export interface StopReport {
  graceMs: number;
  http: DrainReport;
  chat: DrainReport;
}

export interface Served {
  workstation: Workstation;
  front: Front;
  /**
   * Stops gracefully: new requests get 503 and no chat answer starts; running answers get `graceMs`
   * (or until `signal` aborts: a second Ctrl-C); each one left is ended cleanly; then the front closes
   * and the engines stop.
   */
  stop(graceMs?: number, signal?: AbortSignal): Promise<StopReport>;
  /** Stops at once: open connections are dropped. */
  close(): Promise<void>;
}

/** Starts a workstation (with `config`'s model, or empty for the loader) and its front. */
export async function serve(config: RunConfig | null, options: ServeOptions = {}): Promise<Served> {
  // A config without a card list uses the cards NVML sees; without NVML (or a GPU), CPU engines.
  const gpuMonitor = new GpuMonitor();
  const dataDir = options.dataDir ?? defaultDataDir();
  const detectedGpus = gpuMonitor.detectedCards();
  // This machine's `manifold engine calibrate` verdict, if any, picks the default engine kind.
  const calibrationRead = readCalibration(dataDir, thisMachine(detectedGpus.length));
  const engineKind = defaultEngineKind({ calibration: calibrationRead.calibration });
  const workstation = new Workstation({
    config,
    machine: { detectedGpus, cpuCores: os.availableParallelism(), defaultEngineKind: engineKind },
    gpuMonitor,
    dataDir,
    ...(options.modelsDir === undefined ? {} : { modelsDir: options.modelsDir }),
    ...(options.arenaFacts ? { arenaFacts: options.arenaFacts } : {}),
    spawn: options.spawn ?? forkEngine,
    spawnTokenizer: options.spawnTokenizer ?? forkTokenizer,
    ...(options.tokenizerOptions ? { tokenizerOptions: options.tokenizerOptions } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.logFile !== undefined ? { logFile: options.logFile } : {}),
    ...(options.logRotation ? { logRotation: options.logRotation } : {}),
    ...(options.replicaOptions ? { replicaOptions: options.replicaOptions } : {}),
  });
  if (calibrationRead.ignored) workstation.log.warn(`the engine calibration is not followed: ${calibrationRead.ignored}`);
  const verdict = calibrationRead.calibration;
  if (verdict) {
    const measured = `${verdict.kinds['node-llama-cpp'].seconds.toFixed(2)} s on node-llama-cpp, ${verdict.kinds['llama-server'].seconds.toFixed(2)} s on llama-server`;
    const runs =
      engineKind === verdict.faster
        ? 'a config without engine.kind runs it'
        : `a config without engine.kind runs ${engineKind} (${ENGINE_KIND_VARIABLE} names it, or llama-server is not installed)`;
    workstation.log.info(`engine calibration of ${verdict.measuredAt}: ${verdict.faster} is the faster kind here (${measured}); ${runs}`);
  }
  const front = await controlToken(dataDir, { rotate: options.newToken ?? false, note: (line) => workstation.log.warn(line) })
    .then((token) => startFront(workstation, { ...options.front, token }))
    .catch(async (error: unknown) => {
      await workstation.close();
      throw error;
    });
  try {
    await workstation.start();
  } catch (error) {
    await front.close();
    await workstation.close();
    throw error;
  }
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      await front.close();
      await workstation.close();
    })());
  return {
    workstation,
    front,
    stop: async (graceMs = options.shutdownGraceMs ?? config?.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS, signal) => {
      workstation.log.info(
        `stopping: ${front.openGenerations} requests and ${workstation.chat.answering} chat answers running get ${graceMs} ms to finish; new requests get 503`,
      );
      const [http, chat] = await Promise.all([front.drain(graceMs, signal), workstation.chat.drain(graceMs, signal)]);
      workstation.log.info(
        `stopping: ${http.finished + chat.finished} answers finished, ${http.cut + chat.cut} cut at the end of the grace period; stopping the engines`,
      );
      await close();
      return { graceMs, http, chat };
    },
    close,
  };
}
