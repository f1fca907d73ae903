/**
 * Core's log on real files: lines reach the rotating file with their levels, the file rotates at its
 * size bound keeping the number of files asked for, a new log starts with the previous run's last lines
 * (from the rotated file too when the current one is short), the read-back is bounded, and a file that
 * cannot be written costs one error line and nothing else.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../common/contract.js';
import { CoreLog, terminalLine } from '../../core/logging/core-log.js';
import { readLogTail } from '../../core/logging/log-tail.js';
import { waitFor } from '../helpers/engines.js';

function logDir(): string {
  return mkdtempSync(join(tmpdir(), 'manifold-log-'));
}

function fileLines(path: string): { level: string; time: string; msg: string }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: string; time: string; msg: string });
}

describe('core log', () => {
  it('writes each line with its level and time to the file, the echo and listeners', async () => {
    const file = join(logDir(), 'logs', 'manifold.log');
    const echoed: string[] = [];
    const heard: LogEntry[] = [];
    const log = new CoreLog({ file, echo: (line, level) => echoed.push(terminalLine(line, level)) });
    log.onEntry((entry) => heard.push(entry));
    log.info('engine ready');
    log.warn('[replica 1 42] exited: crashed (code none, signal SIGKILL)');
    log.error('front: GET /v1/models: internal error: 100% "odd" %s');
    log.sink('from a sink');
    await log.close();

    const written = fileLines(file);
    expect(written.map((l) => [l.level, l.msg])).toEqual([
      ['info', 'engine ready'],
      ['warn', '[replica 1 42] exited: crashed (code none, signal SIGKILL)'],
      ['error', 'front: GET /v1/models: internal error: 100% "odd" %s'],
      ['info', 'from a sink'],
    ]);
    for (const line of written) expect(Date.parse(line.time)).toBeGreaterThan(Date.now() - 60_000);
    expect(echoed).toEqual([
      'engine ready',
      'warn: [replica 1 42] exited: crashed (code none, signal SIGKILL)',
      'error: front: GET /v1/models: internal error: 100% "odd" %s',
      'from a sink',
    ]);
    expect(heard.map((e) => [e.seq, e.level])).toEqual([
      [1, 'info'],
      [2, 'warn'],
      [3, 'error'],
      [4, 'info'],
    ]);
    expect(log.recent()).toEqual(heard);
  });

  it('rotates at the size bound and keeps the number of files asked for', async () => {
    const dir = logDir();
    const file = join(dir, 'manifold.log');
    const maxBytes = 2048;
    const log = new CoreLog({ file, rotation: { maxBytes, keep: 2 } });
    const lines = Array.from({ length: 200 }, (_, i) => `line ${String(i).padStart(3, '0')} ${'x'.repeat(40)}`);
    for (const line of lines) log.info(line);
    await log.close();

    expect(readdirSync(dir).sort()).toEqual(['manifold.log', 'manifold.log.1', 'manifold.log.2']);
    const longest = Math.max(...fileLines(file).map((l) => JSON.stringify(l).length + 1));
    for (const rotated of ['manifold.log.1', 'manifold.log.2']) {
      const size = statSync(join(dir, rotated)).size;
      expect(size, rotated).toBeGreaterThanOrEqual(maxBytes);
      // Rotated as soon as a write reached the bound: at most the lines written together past it.
      expect(size, rotated).toBeLessThan(maxBytes + 8 * longest);
    }
    expect(statSync(file).size).toBeLessThan(maxBytes);
    // What is kept is the newest lines, in order, ending with the last one written.
    const kept = [...fileLines(join(dir, 'manifold.log.2')), ...fileLines(join(dir, 'manifold.log.1')), ...fileLines(file)].map((l) => l.msg);
    expect(kept).toEqual(lines.slice(lines.length - kept.length));
    expect(kept.length).toBeLessThan(lines.length);
  });

  it('starts with the previous run’s last lines, from the rotated file too when the current one is short', async () => {
    const dir = logDir();
    const file = join(dir, 'manifold.log');
    const first = new CoreLog({ file, rotation: { maxBytes: 1024, keep: 3 } });
    for (let i = 0; i < 30; i++) first.write(i % 10 === 9 ? 'warn' : 'info', `first run ${i}`);
    await first.close();
    expect(statSync(file).size).toBeLessThan(1024);

    const second = new CoreLog({ file, rotation: { maxBytes: 1024, keep: 3 } });
    second.info('second run started');
    const recent = second.recent();
    const fromFirst = recent.filter((e) => e.line.startsWith('first run'));
    // The current file alone holds fewer lines than that: some came from manifold.log.1.
    expect(fileLines(file).length).toBeLessThan(fromFirst.length);
    expect(fromFirst.map((e) => e.line)).toEqual(Array.from({ length: fromFirst.length }, (_, i) => `first run ${30 - fromFirst.length + i}`));
    expect(fromFirst.find((e) => e.line === 'first run 29')?.level).toBe('warn');
    expect(recent.at(-1)!.line).toBe('second run started');
    expect(recent.map((e) => e.seq)).toEqual(recent.map((_, i) => i + 1));
    await second.close();
  });

  it('reads back at most the bound, skipping a torn line', () => {
    const dir = logDir();
    const file = join(dir, 'manifold.log');
    const line = (i: number) => `${JSON.stringify({ level: 'info', time: new Date(1_700_000_000_000 + i).toISOString(), msg: `line ${i}` })}\n`;
    const text = Array.from({ length: 100 }, (_, i) => line(i)).join('');
    writeFileSync(file, `${text}{"level":"info","time":"2024`);
    const records = readLogTail(file, 10 * line(0).length);
    expect(records.map((r) => r.line)).toEqual(Array.from({ length: 9 }, (_, i) => `line ${91 + i}`));
    expect(records[0]).toEqual({ time: 1_700_000_000_091, level: 'info', line: 'line 91' });
    expect(readLogTail(join(dir, 'missing.log'))).toEqual([]);
  });

  it('loses only the file when it cannot be written: one error line, then memory and listeners as before', async () => {
    const dir = logDir();
    writeFileSync(join(dir, 'logs'), 'a file where the folder should be');
    const log = new CoreLog({ file: join(dir, 'logs', 'manifold.log') });
    log.info('before');
    await waitFor(() => log.recent().find((e) => e.level === 'error'), 'the error line');
    log.info('after');
    const recent = log.recent();
    expect(recent.filter((e) => e.level === 'error')).toHaveLength(1);
    expect(recent.find((e) => e.level === 'error')!.line).toMatch(/^log file .*manifold\.log cannot be written \(.*\); it gets no more lines$/);
    expect(recent.at(-1)!.line).toBe('after');
    await log.close();
    log.info('after close');
    expect(log.recent().at(-1)!.line).toBe('after close');
  });
});
