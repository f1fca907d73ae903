/**
 * One model download from Hugging Face or a URL, through node-llama-cpp's model downloader (ipull
 * underneath: Hugging Face URIs, `HF_ENDPOINT` or the `hubEndpoint` option, `HF_TOKEN`, split GGUFs
 * `-00001-of-0000N`, resume from the partial file). The only file of core that imports node-llama-cpp:
 * the downloader moves bytes and reads no model, so no native code runs here.
 *
 * The files are written into a staging folder inside the models folder (`.partial/<key>`, one per URI,
 * so a later pull of the same URI resumes), checked with the bounded GGUF header reader, and only then
 * renamed into the models folder: a model is never listed half-written or unchecked. A stalled server
 * (no bytes for `stallMs`) ends the download with a clear error and keeps the partial file to resume.
 */
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ModelDownloader } from 'node-llama-cpp';
import type { DownloadProgress } from '../../common/model-download.js';
import { GgufFormatError } from '../../common/gguf/header-reader.js';
import { ModelFileError, readGgufFileHeader, readModelFileHeader } from '../../common/node/gguf-file.js';

/** Where the partial downloads live, inside the models folder (same file system, so the final rename is atomic). */
export const PARTIAL_FOLDER = '.partial';
const DEFAULT_STALL_MS = 60_000;

export type ModelDownloadErrorCode = 'failed' | 'not_gguf' | 'stalled' | 'cancelled';

export class ModelDownloadError extends Error {
  override readonly name = 'ModelDownloadError';
  constructor(
    readonly code: ModelDownloadErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface ModelDownloadOptions {
  readonly uri: string;
  readonly modelsDir: string;
  /** The Hub's base URL (default: `HF_ENDPOINT`, else https://huggingface.co/). */
  readonly hubEndpoint?: string;
  /** A Hugging Face token for gated repos (default: `HF_TOKEN`). */
  readonly token?: string;
  /** No new bytes for this long ends the download as stalled (default 60 s). */
  readonly stallMs?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: DownloadProgress) => void;
}

export interface ModelDownloadResult {
  /** The model's path in the models folder (the first part of a split model). */
  readonly path: string;
  /** Every file it landed as. */
  readonly files: string[];
  readonly bytes: number;
}

/** The staging folder of a URI. */
export function partialFolder(modelsDir: string, uri: string): string {
  return join(modelsDir, PARTIAL_FOLDER, createHash('sha256').update(uri).digest('hex').slice(0, 16));
}

/** Downloads `uri` into the models folder; throws ModelDownloadError in words. */
export async function downloadModel(options: ModelDownloadOptions): Promise<ModelDownloadResult> {
  const { uri, modelsDir, signal } = options;
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const staging = partialFolder(modelsDir, uri);
  const base: DownloadProgress = {
    uri,
    state: 'resolving',
    file: null,
    downloadedBytes: 0,
    totalBytes: 0,
    bytesPerSecond: 0,
    etaSeconds: null,
    path: null,
    error: null,
  };
  const report = (change: Partial<DownloadProgress>): void => {
    Object.assign(base, change);
    options.onProgress?.({ ...base });
  };
  report({});
  await mkdir(staging, { recursive: true });
  const token = options.token ?? process.env.HF_TOKEN;
  const rate = new TransferRate();

  // Loaded when first needed: node-llama-cpp's index is large, and the shell's start should not wait for it.
  const { createModelDownloader } = await import('node-llama-cpp');
  const hub = options.hubEndpoint ?? process.env.HF_ENDPOINT ?? 'https://huggingface.co';
  const downloader = await withStallBound(stallMs, signal, uri, hub, async () =>
    createModelDownloader({
      modelUri: uri,
      dirPath: staging,
      deleteTempFileOnCancel: false,
      parallelDownloads: 2,
      ...(token ? { tokens: { huggingFace: token } } : {}),
      ...(options.hubEndpoint ? { endpoints: { huggingFace: options.hubEndpoint } } : {}),
      onProgress: ({ totalSize, downloadedSize }) => {
        const speed = rate.sample(downloadedSize);
        report({
          downloadedBytes: downloadedSize,
          totalBytes: totalSize,
          bytesPerSecond: speed,
          etaSeconds: speed > 0 ? (totalSize - downloadedSize) / speed : null,
        });
      },
    }),
  ).catch(async (error: unknown) => {
    // Nothing came: no empty staging folder is left behind (a folder with a partial file stays, to resume).
    await rmdir(staging).catch(() => {});
    await rmdir(dirname(staging)).catch(() => {});
    throw error;
  });
  report({ state: 'downloading', file: downloader.entrypointFilename, totalBytes: downloader.totalSize, downloadedBytes: downloader.downloadedSize });

  let stalled = false;
  let seen = -1;
  let lastProgressAt = Date.now();
  const watchdog = setInterval(
    () => {
      const now = downloader.downloadedSize;
      if (now !== seen) {
        seen = now;
        lastProgressAt = Date.now();
      } else if (!stalled && Date.now() - lastProgressAt >= stallMs) {
        stalled = true;
        void downloader.cancel({ deleteTempFile: false });
      }
    },
    Math.max(50, Math.min(1000, stallMs / 4)),
  );
  try {
    await downloader.download(signal ? { signal } : {});
  } catch (error) {
    if (!stalled && !signal?.aborted) throw new ModelDownloadError('failed', failureWords(uri, error as Error, hub));
  } finally {
    clearInterval(watchdog);
  }
  if (signal?.aborted) {
    await rm(staging, { recursive: true, force: true });
    throw new ModelDownloadError('cancelled', `download of ${uri} cancelled`);
  }
  if (stalled) throw stallError(uri, stallMs, downloader.downloadedSize, downloader.totalSize);

  report({ state: 'checking', downloadedBytes: downloader.totalSize, etaSeconds: 0 });
  const files = downloader.filesInfo.map((f) => f.filePath);
  try {
    await readModelFileHeader(downloader.entrypointFilePath);
    for (const part of files.slice(1)) await readGgufFileHeader(part);
  } catch (error) {
    if (!(error instanceof GgufFormatError || error instanceof ModelFileError)) throw error;
    await rm(staging, { recursive: true, force: true });
    throw new ModelDownloadError('not_gguf', `${uri} is not a usable GGUF model (${error.message}); the downloaded file was removed`);
  }
  const landed: string[] = [];
  for (const file of files) {
    const target = join(modelsDir, basename(file));
    await rename(file, target);
    landed.push(target);
  }
  await rm(staging, { recursive: true, force: true });
  const path = join(modelsDir, downloader.entrypointFilename);
  report({ state: 'done', path, bytesPerSecond: 0 });
  return { path, files: landed, bytes: downloader.totalSize };
}

/**
 * Bytes per second over the last few seconds, from the byte counts seen (ipull's own average, measured
 * here against a server sending 400 kB/s, read 20 KiB/s early in a download).
 */
class TransferRate {
  private readonly samples: { at: number; bytes: number }[] = [];

  sample(bytes: number, at = Date.now()): number {
    this.samples.push({ at, bytes });
    while (this.samples.length > 2 && at - this.samples[0]!.at > 3000) this.samples.shift();
    const first = this.samples[0]!;
    const seconds = (at - first.at) / 1000;
    return seconds > 0 ? Math.max(0, bytes - first.bytes) / seconds : 0;
  }
}

function stallError(uri: string, stallMs: number, got: number, total: number): ModelDownloadError {
  const sofar = total > 0 ? ` after ${got} of ${total} bytes` : '';
  return new ModelDownloadError('stalled', `download of ${uri} stalled: no data from the server for ${stallMs / 1000} s${sofar}; pull it again to resume`);
}

/**
 * Resolving the URI and asking the server for the file's size has no timeout of its own: bound it by the
 * stall time. A downloader that arrives after the bound is closed, keeping its partial file.
 */
/** Why a download could not start, in words: a Hub (or host) that cannot be reached is named as such, once. */
export function failureWords(uri: string, error: Error, hub: string): string {
  const causes: string[] = [];
  for (let e: unknown = error; e instanceof Error && causes.length < 4; e = (e as Error & { cause?: unknown }).cause)
    causes.push(`${e.message} ${(e as Error & { code?: unknown }).code ?? ''}`);
  const text = causes.join(' ');
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|ENETUNREACH|getaddrinfo|socket hang up/i.test(text)) {
    const host = /^https?:\/\//.test(uri) ? new URL(uri).host : new URL(hub).host;
    const code = /\b(E[A-Z]{4,})\b/.exec(text)?.[1];
    return `cannot reach ${host} to download ${uri}: this machine is offline or the host is blocked${code ? ` (${code})` : ''}`;
  }
  return `cannot download ${uri}: ${error.message}`;
}

async function withStallBound(
  stallMs: number,
  signal: AbortSignal | undefined,
  uri: string,
  hub: string,
  create: () => Promise<ModelDownloader>,
): Promise<ModelDownloader> {
  const pending = create();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const bound = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(stallError(uri, stallMs, 0, 0)), stallMs);
    onAbort = () => reject(new ModelDownloadError('cancelled', `download of ${uri} cancelled`));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
  });
  try {
    return await Promise.race([pending, bound]);
  } catch (error) {
    void pending.then((late) => late.cancel({ deleteTempFile: false })).catch(() => {});
    if (error instanceof ModelDownloadError) throw error;
    throw new ModelDownloadError('failed', failureWords(uri, error as Error, hub));
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
