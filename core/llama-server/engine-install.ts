/**
 * `manifold engine install`: puts llama.cpp's own release of `llama-server` — the version node-llama-cpp
 * bundles (its `llama.cpp.info.json` tag), for this platform and a GPU backend — where core looks for the
 * binary (llama-server-binary.ts's cache folder), so replicas run it by default. The release's JSON comes
 * from GitHub's REST API (`GITHUB_TOKEN` is sent when set), the archive is downloaded with ipull (progress,
 * retries), its SHA-256 checked against the release's `digest` before anything is unpacked, then unpacked
 * (tar or zip) in a work folder beside the target, the binary started once (`--version`) to prove it runs
 * here, and only then moved into place (a rename), with `install.json` saying where it came from. Any
 * failure leaves the previous binary, if any, untouched. Tests point `apiBase` at a loopback server.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import extractZip from 'extract-zip';
import { downloadFile } from 'ipull';
import { extract as extractTar } from 'tar';
import { bundledLlamaRelease, LLAMA_SERVER_FILE, llamaServerCacheDir } from '../../common/node/llama-server-binary.js';
import { chooseReleaseAsset, ReleaseAssetError, releaseSchema, type ChosenAsset, type EngineBackend } from './release-asset.js';

export interface EngineInstallProgress {
  readonly file: string;
  readonly bytes: number;
  readonly totalBytes: number;
  readonly bytesPerSecond: number;
}

export interface EngineInstallOptions {
  readonly backend: EngineBackend;
  readonly platform?: NodeJS.Platform;
  readonly arch?: string;
  /** GitHub's REST API; a loopback server in tests. */
  readonly apiBase?: string;
  readonly githubToken?: string;
  /** The cache root (default: llama-server-binary.ts's). */
  readonly cacheRoot?: string;
  /** The llama.cpp release (default: the one node-llama-cpp bundles). */
  readonly release?: { tag: string; repo: string };
  readonly onProgress?: (progress: EngineInstallProgress) => void;
}

export interface EngineInstallResult {
  readonly binary: string;
  readonly tag: string;
  readonly asset: string;
  readonly sha256: string;
  /** The first line of `llama-server --version`. */
  readonly version: string;
}

export class EngineInstallError extends Error {
  override readonly name = 'EngineInstallError';
}

const DEFAULT_API = 'https://api.github.com';

async function fetchRelease(apiBase: string, repo: string, tag: string, token: string | undefined) {
  const url = `${apiBase.replace(/\/$/, '')}/repos/${repo}/releases/tags/${encodeURIComponent(tag)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/vnd.github+json', 'user-agent': 'manifold-engine-install', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new EngineInstallError(`cannot reach ${url}: ${(error as Error).message}`);
  }
  if (!response.ok) throw new EngineInstallError(`${url} answered ${response.status} ${response.statusText}: no llama.cpp release ${tag} to install`);
  const parsed = releaseSchema.safeParse(await response.json().catch(() => null));
  if (!parsed.success) throw new EngineInstallError(`${url} did not answer with a GitHub release: ${parsed.error.issues[0]?.message ?? 'unreadable'}`);
  return parsed.data;
}

async function download({ asset, sha256 }: ChosenAsset, directory: string, onProgress: EngineInstallOptions['onProgress']): Promise<string> {
  const downloader = await downloadFile({ url: asset.browser_download_url, directory, fileName: asset.name, cliProgress: false, parallelStreams: 1 });
  downloader.on('progress', (status) =>
    onProgress?.({
      file: asset.name,
      bytes: status.transferredBytes,
      totalBytes: status.totalBytes,
      bytesPerSecond: status.transferAction === 'Downloading' ? status.speed : 0,
    }),
  );
  try {
    await downloader.download();
  } catch (error) {
    throw new EngineInstallError(`cannot download ${asset.browser_download_url}: ${(error as Error).message}`);
  }
  const path = join(directory, asset.name);
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  const actual = hash.digest('hex');
  if (actual !== sha256)
    throw new EngineInstallError(`${asset.name} does not match the release's checksum (sha256 ${actual}, the release says ${sha256}); nothing was installed`);
  return path;
}

async function unpack(archive: string, into: string): Promise<void> {
  await mkdir(into, { recursive: true });
  if (archive.endsWith('.zip')) await extractZip(archive, { dir: into });
  else await extractTar({ file: archive, cwd: into });
}

/** The folder of the first `llama-server` file under `root` (archives nest it at different depths). */
async function binaryFolder(root: string): Promise<string | null> {
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === LLAMA_SERVER_FILE) return entry.parentPath;
  }
  return null;
}

/** Downloads, verifies, unpacks and places llama-server; see the file's comment. */
export async function installLlamaServer(options: EngineInstallOptions): Promise<EngineInstallResult> {
  const { tag, repo } = options.release ?? bundledLlamaRelease();
  const release = await fetchRelease(options.apiBase ?? DEFAULT_API, repo, tag, options.githubToken);
  let choice;
  try {
    choice = chooseReleaseAsset(release, options.platform ?? process.platform, options.arch ?? os.arch(), options.backend);
  } catch (error) {
    if (error instanceof ReleaseAssetError) throw new EngineInstallError(error.message);
    throw error;
  }
  const target = llamaServerCacheDir(options.cacheRoot);
  const work = `${target}.install-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const unpacked = join(work, 'unpacked');
    await unpack(await download(choice.archive, work, options.onProgress), unpacked);
    const folder = await binaryFolder(unpacked);
    if (folder === null) throw new EngineInstallError(`${choice.archive.asset.name} holds no ${LLAMA_SERVER_FILE}`);
    for (const extra of choice.extras) await unpack(await download(extra, work, options.onProgress), folder);
    const binary = join(folder, LLAMA_SERVER_FILE);
    await chmod(binary, 0o755);
    const run = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (run.status !== 0) {
      const why = (run.stderr || run.stdout || run.error?.message || `exit ${run.status ?? run.signal}`).trim().split('\n').slice(-3).join(' ');
      throw new EngineInstallError(`the downloaded llama-server does not run on this machine (${why}); nothing was installed`);
    }
    const version =
      `${run.stdout}\n${run.stderr}`
        .split('\n')
        .find((line) => /version/i.test(line))
        ?.trim() ?? '';
    const result: EngineInstallResult = {
      binary: join(target, LLAMA_SERVER_FILE),
      tag,
      asset: choice.archive.asset.name,
      sha256: choice.archive.sha256,
      version,
    };
    await writeFile(
      join(folder, 'install.json'),
      `${JSON.stringify({ source: 'release', repo, ...result, backend: options.backend, installedAt: new Date().toISOString() }, null, 2)}\n`,
    );
    // Into place: the old folder aside, the new one in (one rename each), the old one removed.
    await mkdir(dirname(target), { recursive: true });
    const previous = `${target}.previous-${process.pid}`;
    const hadPrevious = await rename(target, previous).then(
      () => true,
      (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? false : Promise.reject(error)),
    );
    await rename(folder, target);
    if (hadPrevious) await rm(previous, { recursive: true, force: true });
    return result;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
