/**
 * An engine under Electron reports the real reason it died: the desktop's utility-process spawn
 * (electron/utility-engine.ts, with `electron` replaced by a recorder of app and utilityProcess) pairs
 * each process's `exit` with app's `child-process-gone` for its name, in either order; the supervisor
 * words the reason in its exit line; engine lines get their level.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EngineExit, SpawnEngine } from '../../core/engine/engine-process.js';
import { describeExit } from '../../core/supervisor/child-life.js';
import { engineLineLevel } from '../../core/node-llama-cpp/engine-supervisor.js';

class RecordedChild extends EventEmitter {
  readonly stdout = null;
  readonly stderr = null;
  pid: number | undefined = 4242;
  postMessage(): void {}
  kill(): boolean {
    return true;
  }
}

const app = new EventEmitter();
const forked: { child: RecordedChild; serviceName: string }[] = [];
let utilityEngine: SpawnEngine;

beforeAll(async () => {
  vi.doMock('electron', () => ({
    app,
    utilityProcess: {
      fork: (_script: string, _args: string[], options: { serviceName: string }) => {
        const child = new RecordedChild();
        forked.push({ child, serviceName: options.serviceName });
        return child;
      },
    },
  }));
  ({ utilityEngine } = await import('../../electron/utility-engine.js'));
});

afterEach(() => {
  vi.useRealTimers();
});

/** Spawns an engine through the desktop's spawn and records its exits. */
function spawnRecorded() {
  const engine = utilityEngine({});
  const { child, serviceName } = forked.at(-1)!;
  const exits: EngineExit[] = [];
  engine.onExit((exit) => exits.push(exit));
  const gone = (reason: string, exitCode: number, details: Partial<{ type: string; name: string }> = {}) =>
    app.emit('child-process-gone', {}, { type: 'Utility', reason, exitCode, serviceName: 'node.mojom.NodeService', name: serviceName, ...details });
  return { child, serviceName, exits, gone };
}

describe('utility engine exits', () => {
  it('forks each engine under a name of its own', () => {
    const a = spawnRecorded();
    const b = spawnRecorded();
    expect(a.serviceName).not.toBe(b.serviceName);
    expect(a.serviceName).toMatch(/^Manifold engine \d+$/);
  });

  it('carries the reason when child-process-gone comes before the exit', () => {
    const { child, exits, gone } = spawnRecorded();
    gone('oom', 9);
    expect(exits).toEqual([]);
    child.emit('exit', 9);
    expect(exits).toEqual([{ code: 9, signal: null, reason: 'oom' }]);
  });

  it('waits for the reason when the exit comes first, and reports it once', () => {
    vi.useFakeTimers();
    const { child, exits, gone } = spawnRecorded();
    child.emit('exit', 139);
    vi.advanceTimersByTime(200);
    expect(exits).toEqual([]);
    gone('crashed', 139);
    expect(exits).toEqual([{ code: 139, signal: null, reason: 'crashed' }]);
    gone('killed', 139);
    vi.advanceTimersByTime(5000);
    expect(exits).toHaveLength(1);
  });

  it('reports a non-zero exit without a reason when none comes, and a clean exit at once', () => {
    vi.useFakeTimers();
    const silent = spawnRecorded();
    silent.child.emit('exit', 1);
    vi.advanceTimersByTime(999);
    expect(silent.exits).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(silent.exits).toEqual([{ code: 1, signal: null }]);

    const clean = spawnRecorded();
    clean.child.emit('exit', 0);
    expect(clean.exits).toEqual([{ code: 0, signal: null }]);
  });

  it('ignores other processes, other engines and reasons it does not know', () => {
    const { child, exits, gone } = spawnRecorded();
    const other = spawnRecorded();
    gone('oom', 9, { type: 'GPU' });
    gone('oom', 9, { name: 'Network Service' });
    gone('something-new', 9);
    other.gone('killed', 9);
    child.emit('exit', 0);
    expect(exits).toEqual([{ code: 0, signal: null }]);
    other.child.emit('exit', 9);
    expect(other.exits).toEqual([{ code: 9, signal: null, reason: 'killed' }]);
  });
});

describe('supervisor wording', () => {
  it('words Electron’s reason in the exit line, and keeps the plain form without one', () => {
    expect(describeExit({ kind: 'crashed', code: 9, signal: null, reason: 'oom' })).toBe('crashed: out of memory (reason oom, code 9, signal none)');
    expect(describeExit({ kind: 'crashed', code: 9, signal: null, reason: 'killed' })).toBe('crashed: killed (reason killed, code 9, signal none)');
    expect(describeExit({ kind: 'crashed', code: null, signal: 'SIGKILL' })).toBe('crashed (code none, signal SIGKILL)');
  });

  it('gives engine lines their level', () => {
    expect(engineLineLevel('llama.cpp warn: n_ctx_seq (1024) < n_ctx_train')).toBe('warn');
    expect(engineLineLevel('llama.cpp error: failed to allocate')).toBe('error');
    expect(engineLineLevel('uncaught exception: Error: boom')).toBe('error');
    // The rest of an engine's output is for the log file and the dashboard's engine-output toggle.
    expect(engineLineLevel('parent is gone; exiting')).toBe('debug');
  });
});
