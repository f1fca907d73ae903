/**
 * The shared arena (DESIGN §6): the model's bytes in RAM once, owned by the main process, for every
 * engine to load from. Opening one streams the GGUF in (with progress, checking the GGUF magic and
 * computing a SHA-256) and seals it; `enginePath` is what engines load; closing releases it (an engine
 * still mapping it keeps its pages). Which kind it is comes from `planArena` over `readArenaFacts`.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fchmodSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { stat, statfs } from 'node:fs/promises';
import os from 'node:os';
import { GGUF_MAGIC } from '../../common/gguf/format.js';
import { createMemfd, sealReadOnly } from '../../native/linux-memfd.js';
import { closeNamedSection, createNamedSection } from '../../native/windows-section.js';
import type { ArenaFacts, ArenaKind, ArenaPlan } from './arena-plan.js';

/** Bytes read from the model file per step of the fill. */
const FILL_CHUNK_BYTES = 8 * 1024 * 1024;

export class ArenaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArenaError';
  }
}

export interface ArenaFillProgress {
  filledBytes: number;
  totalBytes: number;
}

export type ArenaTarget = Exclude<ArenaPlan, { kind: 'none' }>;

export class ModelArena {
  private released = false;

  private constructor(
    readonly kind: ArenaKind,
    /** The path every engine loads the model from. */
    readonly enginePath: string,
    readonly bytes: number,
    /** SHA-256 of the model's bytes, hex. */
    readonly sha256: string,
    readonly fillMs: number,
    private readonly release: () => void,
  ) {}

  /** Puts `modelPath` into the arena `target` describes; throws ArenaError with nothing left behind. */
  static async open(target: ArenaTarget, modelPath: string, onProgress?: (progress: ArenaFillProgress) => void): Promise<ModelArena> {
    const started = performance.now();
    const done = (enginePath: string, filled: Filled, release: () => void): ModelArena =>
      new ModelArena(target.kind, enginePath, filled.bytes, filled.sha256, performance.now() - started, release);
    switch (target.kind) {
      case 'memfd': {
        const fd = createMemfd(target.name);
        try {
          const filled = await streamModel(modelPath, (chunk, position) => writeAll(fd, chunk, position), onProgress);
          sealReadOnly(fd);
          return done(`/proc/${process.pid}/fd/${fd}`, filled, () => closeSync(fd));
        } catch (error) {
          closeSync(fd);
          throw error;
        }
      }
      case 'shm-file': {
        // O_EXCL: never write through a file or link someone else left under our name.
        const fd = openSync(target.path, 'wx', 0o600);
        const remove = (): void => {
          closeSync(fd);
          unlinkSync(target.path);
        };
        try {
          const filled = await streamModel(modelPath, (chunk, position) => writeAll(fd, chunk, position), onProgress);
          fchmodSync(fd, 0o400);
          return done(target.path, filled, remove);
        } catch (error) {
          remove();
          throw error;
        }
      }
      case 'windows-section': {
        // Reading it once checks it and brings its pages into the cache the section shares.
        const filled = await streamModel(modelPath, () => {}, onProgress);
        const section = createNamedSection(modelPath, target.name);
        return done(modelPath, filled, () => closeNamedSection(section));
      }
    }
  }

  get isOpen(): boolean {
    return !this.released;
  }

  /** Releases the arena (the workstation is closing); engines still mapping it keep their pages. */
  close(): void {
    if (this.released) return;
    this.released = true;
    this.release();
  }
}

interface Filled {
  bytes: number;
  sha256: string;
}

/** The model file's size; a file that cannot be read is an ArenaError. */
async function modelSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    throw new ArenaError(`cannot read the model into the arena: ${(error as Error).message}`);
  }
}

function writeAll(fd: number, chunk: Buffer, position: number): void {
  for (let written = 0; written < chunk.length;) written += writeSync(fd, chunk, written, chunk.length - written, position + written);
}

/** Streams the model through `sink`, checking its magic first and its length last, hashing as it goes. */
async function streamModel(path: string, sink: (chunk: Buffer, position: number) => void, onProgress?: (progress: ArenaFillProgress) => void): Promise<Filled> {
  const totalBytes = await modelSize(path);
  const hash = createHash('sha256');
  let position = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: FILL_CHUNK_BYTES })) {
    const bytes = chunk as Buffer;
    if (position === 0 && (bytes.length < 4 || bytes.readUInt32LE(0) !== GGUF_MAGIC))
      throw new ArenaError(`${path} is not a GGUF file (it does not start with the GGUF magic)`);
    hash.update(bytes);
    sink(bytes, position);
    position += bytes.length;
    onProgress?.({ filledBytes: position, totalBytes });
  }
  if (position < 4) throw new ArenaError(`${path} is not a GGUF file (${position} bytes)`);
  if (position !== totalBytes) throw new ArenaError(`${path} changed while it was read into the arena (${position} of ${totalBytes} bytes)`);
  return { bytes: position, sha256: hash.digest('hex') };
}

function memfdWorks(): boolean {
  try {
    closeSync(createMemfd('manifold-probe'));
    return true;
  } catch {
    return false;
  }
}

/** What `planArena` decides from, read off this machine (any field may be given instead, as tests do). */
export async function readArenaFacts(modelPath: string, requested: boolean, given: Partial<ArenaFacts> = {}): Promise<ArenaFacts> {
  const shmDir = given.shmDir ?? '/dev/shm';
  const platform = given.platform ?? process.platform;
  const modelBytes = given.modelBytes ?? (await modelSize(modelPath));
  const shmFreeBytes =
    given.shmFreeBytes !== undefined
      ? given.shmFreeBytes
      : await statfs(shmDir).then(
          (s) => s.bavail * s.bsize,
          () => null,
        );
  return {
    requested,
    platform,
    pid: given.pid ?? process.pid,
    uid: given.uid ?? process.getuid?.() ?? -1,
    modelPath,
    modelBytes,
    availableRamBytes: given.availableRamBytes ?? os.freemem(),
    memfdAvailable: given.memfdAvailable ?? (platform === 'linux' && requested && memfdWorks()),
    shmDir,
    shmFreeBytes,
  };
}
