/**
 * Reads back the end of a log file written by LogFile: the last `maxBytes` of the current file and, when
 * that file holds less (it was just rotated, or the run was short), the rest from the end of the previous
 * rotation `<file>.1`. Bounded and synchronous (at most `maxBytes` read once, when the log opens, before
 * anything new is written). A torn or foreign line is skipped.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { LOG_LEVELS, type LogLevel } from '../../common/contract.js';
import { parseJsonOr } from '../../common/parse-json.js';

export const BACKFILL_BYTES = 256 * 1024;

export interface LogRecord {
  time: number;
  level: LogLevel;
  line: string;
}

/** The records at the end of `path` (and its previous rotation), oldest first; none when neither exists. */
export function readLogTail(path: string, maxBytes = BACKFILL_BYTES): LogRecord[] {
  const current = tailOf(path, maxBytes);
  const previous = current.bytes < maxBytes ? tailOf(`${path}.1`, maxBytes - current.bytes) : { text: '', bytes: 0 };
  return [...parse(previous.text), ...parse(current.text)];
}

/** The last `maxBytes` of a file as text, starting at a line boundary. */
function tailOf(path: string, maxBytes: number): { text: string; bytes: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return { text: '', bytes: 0 };
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    const read = readSync(fd, buffer, 0, buffer.length, start);
    const text = buffer.subarray(0, read).toString('utf8');
    // Started inside a line: drop its end.
    return { text: start > 0 ? text.slice(text.indexOf('\n') + 1) : text, bytes: read };
  } catch {
    return { text: '', bytes: 0 };
  } finally {
    closeSync(fd);
  }
}

function parse(text: string): LogRecord[] {
  const records: LogRecord[] = [];
  for (const raw of text.split('\n')) {
    if (!raw) continue;
    const { level, time, msg } = (parseJsonOr(raw, null) ?? {}) as { level?: unknown; time?: unknown; msg?: unknown };
    const at = typeof time === 'string' ? Date.parse(time) : NaN;
    if (!LOG_LEVELS.includes(level as LogLevel) || typeof msg !== 'string' || Number.isNaN(at)) continue;
    records.push({ time: at, level: level as LogLevel, line: msg });
  }
  return records;
}
