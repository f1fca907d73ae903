/** An engine whose parent is killed exits by itself: no orphan keeps a model in memory. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tsxExecArgv } from '../helpers/tsx.js';
import { testModelPath, waitFor } from '../helpers/engines.js';

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('engine lifetime', () => {
  it('exits when its parent is SIGKILLed', async () => {
    const fixture = join(import.meta.dirname, '..', 'fixtures', 'engine-parent.ts');
    const parent = spawn(process.execPath, [...tsxExecArgv(), fixture, testModelPath()], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const enginePid = await waitFor(
      () => {
        const match = /engine-pid (\d+)/.exec(out);
        return match ? Number(match[1]) : undefined;
      },
      'the engine pid',
      30_000,
    );
    expect(isRunning(enginePid)).toBe(true);
    parent.kill('SIGKILL');
    await waitFor(() => (isRunning(enginePid) ? undefined : true), 'the engine to exit', 10_000);
    expect(isRunning(enginePid)).toBe(false);
  });
});
