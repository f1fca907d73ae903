/**
 * Reads a GGUF file's header from disk through the bounded reader, with a typed error for a missing file;
 * a model file's header is also held to the hyper-parameter bounds llama.cpp asserts on.
 */
import { open } from 'node:fs/promises';
import { readGgufHeader, type GgufHeader, type GgufReadLimits, DEFAULT_GGUF_READ_LIMITS } from '../gguf/header-reader.js';
import { checkHyperparameters } from '../gguf/hyperparameters.js';

export class ModelFileError extends Error {
  constructor(
    readonly code: 'not_found' | 'not_a_file' | 'unreadable',
    message: string,
  ) {
    super(message);
    this.name = 'ModelFileError';
  }
}

/** Opens `path`, checks it is a regular file, and reads its GGUF header within the given limits. */
export async function readGgufFileHeader(path: string, limits: GgufReadLimits = DEFAULT_GGUF_READ_LIMITS): Promise<GgufHeader> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ModelFileError('not_found', `model file not found: ${path}`);
    throw new ModelFileError('unreadable', `cannot open model file ${path}: ${(error as Error).message}`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new ModelFileError('not_a_file', `model path is not a regular file: ${path}`);
    return await readGgufHeader(
      {
        size: stat.size,
        read: async (offset, length) => {
          const buffer = Buffer.allocUnsafe(length);
          const { bytesRead } = await handle.read(buffer, 0, length, offset);
          return buffer.subarray(0, bytesRead);
        },
      },
      limits,
    );
  } finally {
    await handle.close();
  }
}

/** A model's header, read and checked against llama.cpp's asserts: what every reader runs before native code sees the file. */
export async function readModelFileHeader(path: string): Promise<GgufHeader> {
  const header = await readGgufFileHeader(path);
  checkHyperparameters(header);
  return header;
}
