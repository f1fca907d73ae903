/**
 * A local replica's log, as both of its supervisors (the engine child's, the llama-server child's) write
 * it: each line prefixed `[replica N pid]` and handed to core's log sink with its level, and, where the
 * config names a file for the replica (`<log>.r<i>`), appended to that rotating file too, opened at the
 * first line and closed after the last stop.
 */
import type { LogLevel } from '../../common/contract.js';
import type { LogSink } from '../logging/core-log.js';
import { DEFAULT_ROTATION, LogFile } from '../logging/log-file.js';

export class ReplicaLog {
  private file: LogFile | undefined;

  constructor(
    /** Who writes: `replica N`, or `embeddings` for the embedding engine. */
    private readonly name: string,
    private readonly sink: LogSink,
    private readonly path: string | null | undefined,
    /** The child's pid now, for the prefix (`-` while there is none). */
    private readonly pid: () => number | undefined,
  ) {}

  write(line: string, level: LogLevel = 'info'): void {
    const prefixed = `[${this.name} ${this.pid() ?? '-'}] ${line}`;
    this.sink(prefixed, level);
    if (!this.path) return;
    this.file ??= new LogFile(this.path, DEFAULT_ROTATION, (problem) => this.sink(`[${this.name}] ${problem}`, 'error'));
    this.file.write(level, prefixed);
  }

  /** Writes out and closes the file; a later line opens it again. */
  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.close();
  }
}
