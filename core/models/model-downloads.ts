/**
 * The workstation's downloads: at most one per URI at a time, each cancellable, their progress handed to
 * listeners (the contract's `download` event, at most every 250 ms a download, every change of state at
 * once) and to the log (every 10 s and at the end), and the recent ones kept for `listDownloads`.
 */
import { describeProgress, type DownloadProgress } from '../../common/model-download.js';
import { formatBytes } from '../../common/format-bytes.js';
import { downloadModel, ModelDownloadError, type ModelDownloadResult } from './model-download.js';

export { ModelDownloadError };

const EVENT_EVERY_MS = 250;
const LOG_EVERY_MS = 10_000;
const KEPT = 20;

export interface ModelDownloadsOptions {
  /** The models folder, or null when there is none (a download is then refused). */
  readonly modelsDir: string | null;
  readonly log: (level: 'info' | 'warn', line: string) => void;
  /** The Hub's base URL; default `HF_ENDPOINT`, else https://huggingface.co/. */
  readonly hubEndpoint?: string;
  readonly stallMs?: number;
}

export class ModelDownloads {
  private readonly active = new Map<string, AbortController>();
  private readonly latest = new Map<string, DownloadProgress>();
  private readonly listeners = new Set<(progress: DownloadProgress) => void>();

  constructor(private readonly options: ModelDownloadsOptions) {}

  /** The Hub it downloads from when not HF_ENDPOINT's (tests' loopback Hub); the Hub search asks the same one. */
  get hubEndpoint(): string | undefined {
    return this.options.hubEndpoint;
  }

  onProgress(listener: (progress: DownloadProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The downloads running and the last ones ended, newest last. */
  list(): DownloadProgress[] {
    return [...this.latest.values()];
  }

  /** Downloads `uri` into the models folder; resolves when it is there, checked. */
  async download(uri: string): Promise<ModelDownloadResult> {
    const { modelsDir, log } = this.options;
    if (!modelsDir) throw new ModelDownloadError('failed', 'there is no models folder to download into');
    if (this.active.has(uri)) throw new ModelDownloadError('failed', `uri: ${uri} is already downloading`);
    const controller = new AbortController();
    this.active.set(uri, controller);
    let sentAt = 0;
    let loggedAt = Date.now();
    let state: DownloadProgress['state'] | null = null;
    const publish = (progress: DownloadProgress, force = false): void => {
      this.latest.delete(uri);
      this.latest.set(uri, progress);
      while (this.latest.size > KEPT) this.latest.delete(this.latest.keys().next().value!);
      const now = Date.now();
      if (force || progress.state !== state || now - sentAt >= EVENT_EVERY_MS) {
        sentAt = now;
        for (const listener of this.listeners) listener(progress);
      }
      if (progress.state === 'downloading' && now - loggedAt >= LOG_EVERY_MS) {
        loggedAt = now;
        log('info', `download ${uri}: ${describeProgress(progress)}`);
      }
      state = progress.state;
    };
    log('info', `download ${uri} into ${modelsDir}`);
    try {
      const result = await downloadModel({
        uri,
        modelsDir,
        signal: controller.signal,
        onProgress: (progress) => publish(progress),
        ...(this.options.hubEndpoint ? { hubEndpoint: this.options.hubEndpoint } : {}),
        ...(this.options.stallMs ? { stallMs: this.options.stallMs } : {}),
      });
      log('info', `download ${uri}: done, ${formatBytes(result.bytes)} in ${result.path}`);
      return result;
    } catch (error) {
      const ended = error instanceof ModelDownloadError && error.code === 'cancelled' ? 'cancelled' : 'failed';
      const last = this.latest.get(uri);
      if (last) publish({ ...last, state: ended, error: (error as Error).message, bytesPerSecond: 0, etaSeconds: null }, true);
      log(ended === 'cancelled' ? 'info' : 'warn', (error as Error).message);
      throw error;
    } finally {
      this.active.delete(uri);
    }
  }

  /** Cancels the download of `uri`, or forgets it once ended (a failure the user dismissed); false when there is neither. */
  cancel(uri: string): boolean {
    const controller = this.active.get(uri);
    if (controller) {
      controller.abort();
      return true;
    }
    return this.latest.delete(uri);
  }

  /** Cancels every download (the workstation closing). */
  cancelAll(): void {
    for (const controller of this.active.values()) controller.abort();
  }
}
