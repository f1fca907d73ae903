/**
 * One log file on disk: pino writing NDJSON (`{"level":"warn","time":"<ISO>","msg":"…"}` per line) into a
 * rotating-file-stream that rotates by size as logrotate does (`<file>` → `<file>.1` → … → `<file>.<keep>`,
 * the oldest dropped). Both run in this thread (no worker-thread transport), so it works the same under
 * tsx and Electron. A file that cannot be written is reported once and then left alone: a log never
 * takes the process down.
 */
import { pino, type Logger } from 'pino';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import type { LogLevel } from '../../common/contract.js';

export interface LogRotation {
  /** A file is rotated once it reaches this size. */
  maxBytes: number;
  /** Rotated files kept besides the current one. */
  keep: number;
}

export const DEFAULT_ROTATION: LogRotation = { maxBytes: 10 * 1024 * 1024, keep: 5 };

export class LogFile {
  private readonly stream: RotatingFileStream;
  private readonly logger: Logger;
  private failed = false;

  /** Opens (creating its folder) `path` for appending; `onError` hears, once, why it could not be written. */
  constructor(
    readonly path: string,
    rotation: LogRotation,
    onError: (message: string) => void,
  ) {
    this.stream = createStream(path, { size: `${rotation.maxBytes}B`, rotate: rotation.keep });
    this.stream.on('error', (error: Error) => {
      if (this.failed) return;
      this.failed = true;
      onError(`log file ${path} cannot be written (${error.message}); it gets no more lines`);
    });
    this.logger = pino(
      { level: 'debug', base: null, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
      this.stream,
    );
  }

  write(level: LogLevel, line: string): void {
    if (!this.failed && this.stream.writable) this.logger[level](line);
  }

  /** Writes what is buffered and closes the file. */
  close(): Promise<void> {
    if (this.stream.writableFinished || this.stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.stream.once('close', resolve);
      this.stream.once('error', () => resolve());
      this.stream.end();
    });
  }
}
