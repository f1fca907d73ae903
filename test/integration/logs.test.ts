/**
 * Logs outlive the process: a served workstation on the generated model (2 CPU replicas) writes
 * `<dataDir>/logs/manifold.log` with levels and a run config's `log` per replica; one engine is killed
 * (a warn line); after it is closed, a second workstation on the same data dir answers the control API's
 * `getLogs` with the first run's last lines, then its own, and sends new lines as `log` events.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../common/contract.js';
import { parseRunConfig } from '../../core/config/run-config.js';
import { serve, type Served } from '../../core/serve.js';
import { openControl } from '../helpers/control.js';
import { testModelPath, waitFor } from '../helpers/engines.js';
import { engineOf } from '../helpers/replica-sets.js';

const opened: Served[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

function fileEntries(path: string): { level: string; msg: string }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: string; msg: string });
}

describe('logs across a restart', () => {
  it('keeps the previous run’s lines, with their levels, for the next run’s dashboard', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'manifold-data-'));
    const replicaLog = join(dataDir, 'replicas.log');
    const config = parseRunConfig({
      model: testModelPath(),
      gpu: 'cpu',
      replicas: 2,
      engine: { contextSize: 1024, slots: 2, threads: 1 },
      log: replicaLog,
      heal: { cooldownMs: 60_000 },
    });

    const first = await serve(config, { dataDir, front: { port: 0 } });
    opened.push(first);
    const victimPid = engineOf(first.workstation.replicas, 1).pid!;
    engineOf(first.workstation.replicas, 1).signal('SIGKILL');
    const exitLine = `[replica 1 ${victimPid}] exited: crashed (code none, signal SIGKILL)`;
    await waitFor(() => first.workstation.log.recent().find((e) => e.line === exitLine), 'the exit line');
    await first.close();
    opened.splice(opened.indexOf(first), 1);

    const file = join(dataDir, 'logs', 'manifold.log');
    const written = fileEntries(file);
    expect(written.find((e) => e.msg === exitLine)?.level).toBe('warn');
    expect(written.find((e) => e.msg.startsWith('workstation ready: 2/2 replicas'))?.level).toBe('info');
    expect(written.some((e) => e.msg.startsWith('[replica 1] healing in') && e.level === 'warn')).toBe(true);
    // The replica's own file, through the same library.
    expect(fileEntries(`${replicaLog}.r1`).find((e) => e.msg === exitLine)?.level).toBe('warn');
    expect(fileEntries(`${replicaLog}.r0`).some((e) => e.msg.startsWith('[replica 0 ') && e.msg.includes('ready:'))).toBe(true);

    const second = await serve(null, { dataDir, front: { port: 0 } });
    opened.push(second);
    const control = await openControl(second.front);
    const answer = await control.call('getLogs');
    expect(answer.ok).toBe(true);
    const entries = answer.value as LogEntry[];
    const lines = entries.map((e) => e.line);
    const exitAt = lines.indexOf(exitLine);
    expect(exitAt).toBeGreaterThanOrEqual(0);
    expect(entries[exitAt]!.level).toBe('warn');
    // The first run's lines come first, in order, then the second run's start.
    const starts = lines.map((line, i) => (line.startsWith('manifold started (pid ') ? i : -1)).filter((i) => i >= 0);
    expect(starts).toHaveLength(2);
    expect(starts[0]!).toBeLessThan(exitAt);
    expect(starts[1]!).toBeGreaterThan(exitAt);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));

    second.workstation.log.warn('a line after connect');
    const event = (await waitFor(() => control.events('log').find((p) => (p as LogEntry).line === 'a line after connect'), 'the log event')) as LogEntry;
    expect(event).toMatchObject({ level: 'warn', seq: entries.at(-1)!.seq + 1 });
    control.close();
  });
});
