/**
 * llama.cpp's source tree, checked out of the git bundle node-llama-cpp ships (the very llama.cpp it runs),
 * for the files the test-model maker borrows from it: the vocab-only GGUFs of `models/ggml-vocab-*.gguf`
 * and the real chat templates of `models/templates/*.jinja`. Cloned once per machine and cached outside the
 * repository, keyed by the bundle's commit: `$MANIFOLD_LLAMA_CPP_SOURCE` or `~/.cache/manifold/llama.cpp/<commit>`.
 */
import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { LLAMA_CPP_BUNDLE, bundledLlamaCommit } from '../common/node/llama-server-binary.js';

const run = promisify(execFile);

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** Where the checkout is or will be: `$MANIFOLD_LLAMA_CPP_SOURCE`, else `~/.cache/manifold/llama.cpp/<commit>`. */
export function llamaCppSourceDir(): string {
  return process.env.MANIFOLD_LLAMA_CPP_SOURCE ?? join(os.homedir(), '.cache', 'manifold', 'llama.cpp', bundledLlamaCommit());
}

/**
 * The checkout's folder, cloning the bundle first when it is not there. The clone goes to a temp folder
 * beside the target and is renamed into place, so a half clone is never used; when another caller's rename
 * won the race, its checkout is used.
 */
export async function ensureLlamaCppSource(): Promise<string> {
  const target = llamaCppSourceDir();
  if (await exists(target)) return target;
  await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(`${target}.clone-`);
  try {
    await run('git', ['clone', '--quiet', LLAMA_CPP_BUNDLE, staging], { maxBuffer: 64 << 20 });
    await rename(staging, target).catch(async (error: unknown) => {
      if (!(await exists(target))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return target;
}

/** The chat template file `name` (a file name in `models/templates` without `.jinja`). */
export function templatePath(source: string, name: string): string {
  return join(source, 'models', 'templates', `${name}.jinja`);
}

/** The names of every chat template in the checkout, sorted. */
export async function templateNames(source: string): Promise<string[]> {
  const files = await readdir(join(source, 'models', 'templates'));
  return files
    .filter((file) => file.endsWith('.jinja'))
    .map((file) => file.slice(0, -'.jinja'.length))
    .sort();
}

/** The vocab-only GGUF `name` (`models/ggml-vocab-<name>.gguf`). */
export function vocabPath(source: string, name: string): string {
  return join(source, 'models', `ggml-vocab-${name}.gguf`);
}
