/**
 * Core's log: every line with its level goes to the rotating file (`<data dir>/logs/manifold.log` by
 * default), to an echo (the serve CLI's stderr, the desktop's stdout), to listeners (the dashboard's `log`
 * event) and into a bounded memory of recent entries that the dashboard backfills from on connect. That
 * memory starts with the previous run's last lines, read back from the file before anything is written.
 * Parts of core that only need to write a line take a `LogSink` (a plain function, info by default).
 */
import type { LogEntry, LogLevel } from '../../common/contract.js';
import { LogFile, DEFAULT_ROTATION, type LogRotation } from './log-file.js';
import { readLogTail } from './log-tail.js';
import { trimLog } from '../../common/log-trim.js';

/** A line and its level (info when not said): what a part of core writes its log through. */
export type LogSink = (line: string, level?: LogLevel) => void;

/** A line as a terminal shows it: its level in front, unless it is info. */
export function terminalLine(line: string, level: LogLevel = 'info'): string {
  return level === 'info' ? line : `${level}: ${line}`;
}

export interface CoreLogOptions {
  /** The log file; null: none (memory, echo and listeners only). */
  file: string | null;
  rotation?: LogRotation;
  /** Also hands every line here. */
  echo?: LogSink;
  /** Recent entries kept for the dashboard. */
  keep?: number;
}

const ENTRIES_KEPT = 500;

export class CoreLog {
  private readonly entries: LogEntry[] = [];
  private readonly listeners = new Set<(entry: LogEntry) => void>();
  private readonly keep: number;
  private file: LogFile | undefined;
  private seq = 0;
  /** This log as a plain function, for the parts of core that take one. */
  readonly sink: LogSink = (line, level = 'info') => this.write(level, line);

  constructor(private readonly options: CoreLogOptions) {
    this.keep = options.keep ?? ENTRIES_KEPT;
    if (!options.file) return;
    for (const record of readLogTail(options.file)) this.remember({ seq: ++this.seq, ...record });
    this.file = new LogFile(options.file, options.rotation ?? DEFAULT_ROTATION, (problem) => this.error(problem));
  }

  info(line: string): void {
    this.write('info', line);
  }

  warn(line: string): void {
    this.write('warn', line);
  }

  error(line: string): void {
    this.write('error', line);
  }

  write(level: LogLevel, line: string): void {
    const entry: LogEntry = { seq: ++this.seq, time: Date.now(), level, line };
    this.remember(entry);
    this.file?.write(level, line);
    this.options.echo?.(line, level);
    for (const listener of this.listeners) listener(entry);
  }

  /** The recent entries, oldest first. */
  recent(): LogEntry[] {
    return [...this.entries];
  }

  onEntry(listener: (entry: LogEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Writes out and closes the file; later lines still reach the memory, the echo and listeners. */
  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.close();
  }

  private remember(entry: LogEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.keep) this.entries.splice(0, this.entries.length, ...trimLog(this.entries, this.keep));
  }
}
