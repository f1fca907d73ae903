/**
 * `manifold engine install` against a loopback stand-in for GitHub's releases, with archives holding the
 * real llama-server binary test/global-setup.ts builds: a .tar.gz and a .zip (no Unix modes) install
 * where core looks and run; a tampered archive, a build the release lacks, a missing release and a
 * binary that does not run are each refused in words and leave the installed binary as it was.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLlamaServer, llamaServerCacheDir } from '../../common/node/llama-server-binary.js';
import { installLlamaServer, type EngineInstallProgress } from '../../core/llama-server/engine-install.js';
import { hostRelease, storedZip, tarGz, type ReleaseHost } from '../helpers/release-host.js';

const repo = 'ggml-org/llama.cpp';
const tag = 'v9.9.9';
const release = { tag, repo };

describe('manifold engine install', () => {
  let dir: string;
  let host: ReleaseHost;
  let built: string;

  beforeAll(async () => {
    built = findLlamaServer() ?? '';
    expect(built, 'test/global-setup.ts builds llama-server').not.toBe('');
    dir = await mkdtemp(join(tmpdir(), 'manifold-engine-install-'));
    await mkdir(join(dir, 'pack', 'build', 'bin'), { recursive: true });
    await copyFile(built, join(dir, 'pack', 'build', 'bin', 'llama-server'));
    const good = await tarGz(join(dir, 'pack'), ['build']);
    await writeFile(join(dir, 'broken'), '#!/bin/sh\necho "cannot load libggml.so" >&2\nexit 3\n', { mode: 0o755 });
    await mkdir(join(dir, 'broken-pack', 'bin'), { recursive: true });
    await copyFile(join(dir, 'broken'), join(dir, 'broken-pack', 'bin', 'llama-server'));
    host = await hostRelease(repo, tag, [
      { name: `llama-${tag}-bin-ubuntu-x64.tar.gz`, bytes: good },
      { name: `llama-${tag}-bin-ubuntu-vulkan-x64.zip`, bytes: await storedZip('llama-server', built) },
      { name: `llama-${tag}-bin-ubuntu-arm64.tar.gz`, bytes: good, digest: `sha256:${'0'.repeat(64)}` },
      { name: `llama-${tag}-bin-win-cpu-x64.zip`, bytes: good, digest: null },
      { name: `llama-${tag}-bin-macos-arm64.tar.gz`, bytes: await tarGz(join(dir, 'broken-pack'), ['bin']) },
    ]);
  });
  afterAll(async () => {
    await host?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const runs = (binary: string): boolean => spawnSync(binary, ['--version'], { encoding: 'utf8' }).status === 0;

  it('installs the release archive where core looks, verified, and the binary runs; a .zip without modes too', async () => {
    const cacheRoot = join(dir, 'cache');
    const progress: EngineInstallProgress[] = [];
    const result = await installLlamaServer({
      backend: 'cpu',
      platform: 'linux',
      arch: 'x64',
      apiBase: host.apiBase,
      cacheRoot,
      release,
      onProgress: (p) => progress.push(p),
    });
    expect(result.binary).toBe(join(llamaServerCacheDir(cacheRoot), 'llama-server'));
    expect(result.asset).toBe(`llama-${tag}-bin-ubuntu-x64.tar.gz`);
    expect(result.version).toMatch(/version/);
    expect(runs(result.binary)).toBe(true);
    expect(progress.at(-1)).toMatchObject({ file: result.asset, bytes: progress.at(-1)!.totalBytes });
    expect(JSON.parse(await readFile(join(llamaServerCacheDir(cacheRoot), 'install.json'), 'utf8'))).toMatchObject({
      source: 'release',
      tag,
      sha256: result.sha256,
      backend: 'cpu',
    });
    // Core finds it there.
    const saved = { binary: process.env.MANIFOLD_LLAMA_SERVER, cache: process.env.MANIFOLD_LLAMA_SERVER_CACHE };
    delete process.env.MANIFOLD_LLAMA_SERVER;
    process.env.MANIFOLD_LLAMA_SERVER_CACHE = cacheRoot;
    try {
      expect(findLlamaServer()).toBe(result.binary);
    } finally {
      for (const [name, value] of [
        ['MANIFOLD_LLAMA_SERVER', saved.binary],
        ['MANIFOLD_LLAMA_SERVER_CACHE', saved.cache],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }

    const vulkan = await installLlamaServer({ backend: 'vulkan', platform: 'linux', arch: 'x64', apiBase: host.apiBase, cacheRoot, release });
    expect(vulkan.asset).toBe(`llama-${tag}-bin-ubuntu-vulkan-x64.zip`);
    expect(runs(vulkan.binary)).toBe(true);
  });

  it('refuses a tampered archive, an unverifiable one, a build the release lacks, a missing release and a binary that does not run, keeping what was installed', async () => {
    const cacheRoot = join(dir, 'cache-refusals');
    const installed = await installLlamaServer({ backend: 'cpu', platform: 'linux', arch: 'x64', apiBase: host.apiBase, cacheRoot, release });
    const attempt = (options: Partial<Parameters<typeof installLlamaServer>[0]>) =>
      installLlamaServer({ backend: 'cpu', platform: 'linux', arch: 'x64', apiBase: host.apiBase, cacheRoot, release, ...options });

    await expect(attempt({ arch: 'arm64' })).rejects.toThrow(
      /llama-v9\.9\.9-bin-ubuntu-arm64\.tar\.gz does not match the release's checksum \(sha256 [0-9a-f]{64}, the release says 0{64}\); nothing was installed/,
    );
    await expect(attempt({ platform: 'win32' })).rejects.toThrow(
      'llama-v9.9.9-bin-win-cpu-x64.zip has no SHA-256 digest in the release, so it cannot be verified',
    );
    await expect(attempt({ backend: 'cuda' })).rejects.toThrow(
      'llama.cpp release v9.9.9 has no cuda build of llama-server for linux x64 (its builds: macos-arm64, ubuntu-arm64, ubuntu-vulkan-x64, ubuntu-x64, win-cpu-x64); build it from source (npm run build:llama-server)',
    );
    await expect(attempt({ release: { tag: 'v0.0.1', repo } })).rejects.toThrow(/answered 404 Not Found: no llama\.cpp release v0\.0\.1 to install/);
    await expect(attempt({ platform: 'darwin', arch: 'arm64', backend: 'metal' })).rejects.toThrow(
      /the downloaded llama-server does not run on this machine \(cannot load libggml\.so\); nothing was installed/,
    );

    expect(runs(installed.binary)).toBe(true);
    expect(JSON.parse(await readFile(join(llamaServerCacheDir(cacheRoot), 'install.json'), 'utf8'))).toMatchObject({ asset: installed.asset });
  });
});
