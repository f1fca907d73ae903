/**
 * A model download as the UI, the CLI and serve's log see it: which URI, how far (bytes, speed, ETA),
 * and how it ended. Shared by the contract's `download` event and the admin routes.
 */
import { z } from 'zod';
import { formatBytes } from './format-bytes.js';

export const DOWNLOAD_STATES = ['resolving', 'downloading', 'checking', 'done', 'failed', 'cancelled'] as const;

export const downloadProgressSchema = z.object({
  uri: z.string(),
  state: z.enum(DOWNLOAD_STATES),
  /** The file's name in the models folder (the first part of a split model); null until resolved. */
  file: z.string().nullable(),
  downloadedBytes: z.number().nonnegative(),
  totalBytes: z.number().nonnegative(),
  bytesPerSecond: z.number().nonnegative(),
  /** Seconds left at the current speed; null when unknown. */
  etaSeconds: z.number().nonnegative().nullable(),
  /** Where the model landed, once done. */
  path: z.string().nullable(),
  /** Why it failed, in words. */
  error: z.string().nullable(),
});
export type DownloadProgress = z.infer<typeof downloadProgressSchema>;

/** `hf:owner/repo/file.gguf`, `hf:owner/repo:QUANT`, or an http(s) URL. */
export const modelUriSchema = z
  .string()
  .trim()
  .min(4)
  .max(2048)
  .refine((uri) => /^hf:[^/\s]+\/[^/\s:]+(\/\S+|:[\w.-]+)?$/.test(uri) || /^https?:\/\/\S+$/.test(uri), {
    message: 'a Hugging Face URI (hf:owner/repo/file.gguf or hf:owner/repo:Q4_K_M) or an http(s) URL',
  });

/** "312.0 MiB of 4.1 GiB, 21.3 MiB/s, 3 min left": the progress line of the UI, the log and the CLI. */
export function describeProgress(progress: Pick<DownloadProgress, 'downloadedBytes' | 'totalBytes' | 'bytesPerSecond' | 'etaSeconds'>): string {
  const { etaSeconds } = progress;
  const eta = etaSeconds === null ? '' : `, ${etaSeconds >= 90 ? `${Math.round(etaSeconds / 60)} min` : `${Math.ceil(etaSeconds)} s`} left`;
  return `${formatBytes(progress.downloadedBytes)} of ${formatBytes(progress.totalBytes)}, ${formatBytes(progress.bytesPerSecond)}/s${eta}`;
}
