/**
 * The arena's platform decision (DESIGN §6), pure so every branch is tested: from the facts of this
 * machine and this model, whether the weights go into a Linux memfd, a /dev/shm file, a Windows named
 * section, or nowhere (with the reason for the log), and whether the RAM warning applies.
 */
import { formatBytes } from '../../common/format-bytes.js';

/** Kept free beside the arena on Linux, so filling it never pushes the machine into the OOM killer. */
export const ARENA_HEADROOM_BYTES = 512 * 1024 * 1024;

export const ARENA_KINDS = ['memfd', 'shm-file', 'windows-section'] as const;
export type ArenaKind = (typeof ARENA_KINDS)[number];

export type ArenaPlan =
  { kind: 'memfd'; name: string } | { kind: 'shm-file'; path: string } | { kind: 'windows-section'; name: string } | { kind: 'none'; reason: string };

export interface ArenaFacts {
  /** The config's `shared_arena`. */
  requested: boolean;
  platform: NodeJS.Platform;
  pid: number;
  uid: number;
  modelPath: string;
  modelBytes: number;
  /** RAM that can be taken without swapping (MemAvailable). */
  availableRamBytes: number;
  /** Whether memfd_create works here (Linux ≥ 3.17, libc bound through koffi). */
  memfdAvailable: boolean;
  /** The shared-memory folder (/dev/shm) and its free bytes; null free bytes when it does not exist. */
  shmDir: string;
  shmFreeBytes: number | null;
}

/** `model-00001-of-00003.gguf`: llama.cpp loads the parts itself, the arena holds one file. */
const SPLIT_MODEL = /-\d{5}-of-\d{5}\.gguf$/i;

/** The name of a /dev/shm arena file: the uid and the pid of the workstation that owns it. */
export function shmArenaFileName(uid: number, pid: number): string {
  return `manifold-${uid}-${pid}.bin`;
}

export const SHM_ARENA_FILE = /^manifold-(\d+)-(\d+)\.bin$/;

export function planArena(facts: ArenaFacts): ArenaPlan {
  if (!facts.requested) return { kind: 'none', reason: 'shared_arena is off; each replica loads the model file itself' };
  if (SPLIT_MODEL.test(facts.modelPath)) {
    return { kind: 'none', reason: 'the model is split into parts (…-00001-of-0000N.gguf), which llama.cpp loads part by part; the arena holds one file' };
  }
  if (facts.platform === 'win32') return { kind: 'windows-section', name: `Local\\manifold-${facts.pid}` };
  if (facts.platform !== 'linux') {
    return { kind: 'none', reason: `no shared arena on ${facts.platform}; each replica maps the model file, and the page cache shares it` };
  }
  const needed = facts.modelBytes + ARENA_HEADROOM_BYTES;
  if (facts.availableRamBytes < needed) {
    return {
      kind: 'none',
      reason: `not enough free RAM for the arena: it needs ${formatBytes(needed)} (the model's ${formatBytes(facts.modelBytes)} + ${formatBytes(ARENA_HEADROOM_BYTES)} headroom), ${formatBytes(facts.availableRamBytes)} is available; each replica loads the model file itself`,
    };
  }
  if (facts.memfdAvailable) return { kind: 'memfd', name: 'manifold-model' };
  if (facts.shmFreeBytes === null)
    return { kind: 'none', reason: `memfd_create is not available and ${facts.shmDir} does not exist; each replica loads the model file itself` };
  if (facts.shmFreeBytes < facts.modelBytes) {
    return {
      kind: 'none',
      reason: `memfd_create is not available and ${facts.shmDir} has ${formatBytes(facts.shmFreeBytes)} free for a ${formatBytes(facts.modelBytes)} model; each replica loads the model file itself`,
    };
  }
  return { kind: 'shm-file', path: `${facts.shmDir}/${shmArenaFileName(facts.uid, facts.pid)}` };
}

export interface RamBudget {
  arenaBytes: number;
  engines: number;
  /** Each engine's estimated private memory (runtime, KV on the host, buffers). */
  enginePrivateBytes: number;
  availableRamBytes: number;
}

/** A warning (never a refusal) when the arena plus the engines' private memory would not fit in free RAM. */
export function arenaRamWarning(budget: RamBudget): string | null {
  const engines = budget.engines * budget.enginePrivateBytes;
  const total = budget.arenaBytes + engines;
  if (total <= budget.availableRamBytes) return null;
  return (
    `RAM: the arena (${formatBytes(budget.arenaBytes)}) plus ${budget.engines} engines' private memory (~${formatBytes(budget.enginePrivateBytes)} each) ` +
    `need ${formatBytes(total)}, but ${formatBytes(budget.availableRamBytes)} is available; expect swapping, or an engine killed for memory`
  );
}
