/**
 * The workstation's arena from start to close (DESIGN §6): sweeps stale /dev/shm files, reads the
 * machine's facts, plans, fills with progress in the log, warns when RAM looks short, and keeps the
 * status the dashboard shows. When there is no arena, `modelPath` is the model file itself and the log
 * says why. A model that is not a GGUF fails the start with the arena's clear error; a machine that
 * refuses the arena (no memory file could be made) only loses the arena, and says so.
 */
import type { ArenaStatus } from '../../common/contract.js';
import { formatBytes } from '../../common/format-bytes.js';
import { arenaRamWarning, planArena, type ArenaFacts } from './arena-plan.js';
import { ArenaError, ModelArena, readArenaFacts } from './model-arena.js';
import { removeStaleArenaFiles } from './stale-arena-files.js';
import type { LogSink } from '../logging/core-log.js';

export interface SharedArenaOptions {
  modelPath: string;
  /** The config's `shared_arena`. */
  requested: boolean;
  /** Engines that will load from it, and each one's estimated private memory, for the RAM warning. */
  engines: number;
  enginePrivateBytes: number;
  log: LogSink;
  /** The fill's progress, 0..1. */
  onProgress?: (fraction: number) => void;
  /** Facts given instead of read off the machine (tests force the /dev/shm fallback or low RAM). */
  facts?: Partial<ArenaFacts>;
}

/** Progress lines at every quarter of the fill. */
const PROGRESS_STEPS = 4;

export class SharedArena {
  private arena: ModelArena | null = null;
  private statusValue: ArenaStatus;

  private constructor(private readonly modelFile: string) {
    this.statusValue = { state: 'off', kind: null, reason: null, modelBytes: 0, filledBytes: 0, sha256: null, enginePath: null, warning: null, fillMs: null };
  }

  static async start(options: SharedArenaOptions): Promise<SharedArena> {
    const shared = new SharedArena(options.modelPath);
    await shared.fill(options);
    return shared;
  }

  private async fill(options: SharedArenaOptions): Promise<void> {
    const { log } = options;
    if (!options.requested) {
      this.statusValue = { ...this.statusValue, reason: 'shared_arena is off' };
      return;
    }
    const platform = options.facts?.platform ?? process.platform;
    const uid = options.facts?.uid ?? process.getuid?.();
    if (platform === 'linux' && uid !== undefined) {
      for (const path of await removeStaleArenaFiles(options.facts?.shmDir ?? '/dev/shm', uid))
        log(`arena: removed ${path}, left by a workstation that no longer runs`);
    }
    const facts = await readArenaFacts(options.modelPath, true, options.facts);
    const plan = planArena(facts);
    this.statusValue = { ...this.statusValue, modelBytes: facts.modelBytes };
    if (plan.kind === 'none') {
      this.statusValue = { ...this.statusValue, reason: plan.reason };
      log(`arena: none (${plan.reason})`);
      return;
    }
    const warning = arenaRamWarning({
      arenaBytes: facts.modelBytes,
      engines: options.engines,
      enginePrivateBytes: options.enginePrivateBytes,
      availableRamBytes: facts.availableRamBytes,
    });
    if (warning) log(`arena: warning: ${warning}`, 'warn');
    this.statusValue = { ...this.statusValue, state: 'filling', kind: plan.kind, warning };
    log(`arena: reading ${options.modelPath} (${formatBytes(facts.modelBytes)}) into a ${plan.kind}`);
    let nextStep = 1;
    try {
      this.arena = await ModelArena.open(plan, options.modelPath, ({ filledBytes, totalBytes }) => {
        this.statusValue = { ...this.statusValue, filledBytes };
        if (totalBytes > 0) options.onProgress?.(filledBytes / totalBytes);
        while (totalBytes > 0 && filledBytes >= (totalBytes * nextStep) / PROGRESS_STEPS && nextStep <= PROGRESS_STEPS) {
          log(`arena: ${Math.round((100 * nextStep) / PROGRESS_STEPS)}% (${formatBytes(filledBytes)})`);
          nextStep++;
        }
      });
    } catch (error) {
      this.statusValue = { ...this.statusValue, state: 'off', kind: null, filledBytes: 0, reason: (error as Error).message };
      // A model that is not a GGUF fails the start; a machine that refuses the arena only loses the arena.
      if (error instanceof ArenaError) throw error;
      log(`arena: none (${plan.kind} failed: ${(error as Error).message}); each replica loads the model file itself`, 'warn');
      return;
    }
    const arena = this.arena;
    this.statusValue = {
      ...this.statusValue,
      state: 'ready',
      filledBytes: arena.bytes,
      sha256: arena.sha256,
      enginePath: arena.enginePath,
      fillMs: arena.fillMs,
    };
    log(
      `arena: ready, ${plan.kind} at ${arena.enginePath}, ${formatBytes(arena.bytes)} in ${Math.round(arena.fillMs)} ms, sha256 ${arena.sha256.slice(0, 16)}…`,
    );
  }

  /** What engines (and the tokenizer) load: the arena when there is one, else the model file. */
  get modelPath(): string {
    return this.arena?.isOpen ? this.arena.enginePath : this.modelFile;
  }

  status(): ArenaStatus {
    return this.statusValue;
  }

  close(): void {
    if (!this.arena?.isOpen) return;
    this.arena.close();
    this.statusValue = { ...this.statusValue, state: 'closed' };
  }
}
