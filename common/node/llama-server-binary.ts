/**
 * Where llama.cpp's `llama-server` binary is: `MANIFOLD_LLAMA_SERVER` names one; otherwise the one built
 * from the source node-llama-cpp ships (`node_modules/node-llama-cpp/llama/gitRelease.bundle`), cached
 * outside the repository under the bundle's commit: `$MANIFOLD_LLAMA_SERVER_CACHE` or
 * `~/.cache/manifold/llama-server/<commit>-<arch>/llama-server`. The build script (build/llama-server.ts)
 * builds into that place, and `manifold engine install` unpacks llama.cpp's release of the same version
 * there; core looks there when a replica's engine kind is `llama-server`. The commit is read from the
 * bundle's header (`# v2 git bundle`, then `<sha> HEAD`), so no git is needed to find it.
 */
import { accessSync, closeSync, constants, openSync, readFileSync, readSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { repoRootFrom } from './repo-root.js';

const repoRoot = repoRootFrom(import.meta.url, 2);
export const LLAMA_CPP_BUNDLE = join(repoRoot, 'node_modules', 'node-llama-cpp', 'llama', 'gitRelease.bundle');
const LLAMA_CPP_INFO = join(repoRoot, 'node_modules', 'node-llama-cpp', 'llama', 'llama.cpp.info.json');

/** The llama.cpp release the bundle is (node-llama-cpp's `llama.cpp.info.json`): its tag and GitHub repository. */
export function bundledLlamaRelease(info = LLAMA_CPP_INFO): { tag: string; repo: string } {
  const parsed = JSON.parse(readFileSync(info, 'utf8')) as { tag?: unknown; llamaCppGithubRepo?: unknown };
  if (typeof parsed.tag !== 'string' || typeof parsed.llamaCppGithubRepo !== 'string' || !/^[\w.-]+\/[\w.-]+$/.test(parsed.llamaCppGithubRepo)) {
    throw new Error(`${info} does not name a llama.cpp tag and repository`);
  }
  return { tag: parsed.tag, repo: parsed.llamaCppGithubRepo };
}

/** The llama.cpp commit the bundle holds (the cache key); throws naming the file when it cannot be read. */
export function bundledLlamaCommit(bundle = LLAMA_CPP_BUNDLE): string {
  const file = openSync(bundle, 'r');
  try {
    const buffer = Buffer.alloc(1024);
    const header = buffer.subarray(0, readSync(file, buffer, 0, buffer.length, 0)).toString('latin1');
    const commit = /^([0-9a-f]{40}) \S+$/m.exec(header.split('\n\n')[0] ?? '')?.[1];
    if (!header.startsWith('# v') || !commit) throw new Error(`${bundle} is not a git bundle with a head commit`);
    return commit;
  } finally {
    closeSync(file);
  }
}

/** The executable's file name on this platform. */
export const LLAMA_SERVER_FILE = process.platform === 'win32' ? 'llama-server.exe' : 'llama-server';

/**
 * The cache's folder for the bundle's version: `$MANIFOLD_LLAMA_SERVER_CACHE` (or `cacheRoot`), else `~/.cache/manifold/llama-server`, then
 * `<commit>-<arch>`.
 */
export function llamaServerCacheDir(cacheRoot = process.env.MANIFOLD_LLAMA_SERVER_CACHE ?? join(os.homedir(), '.cache', 'manifold', 'llama-server')): string {
  return join(cacheRoot, `${bundledLlamaCommit()}-${os.arch()}`);
}

/** Where the binary is or will be: `MANIFOLD_LLAMA_SERVER`, else the cache entry of the bundle's commit. */
export function llamaServerPath(): string {
  if (process.env.MANIFOLD_LLAMA_SERVER) return process.env.MANIFOLD_LLAMA_SERVER;
  return join(llamaServerCacheDir(), LLAMA_SERVER_FILE);
}

/** The binary when it is there and executable; null when it is not (or the bundle cannot be read). Read once at a start. */
export function findLlamaServer(): string | null {
  try {
    const path = llamaServerPath();
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}
