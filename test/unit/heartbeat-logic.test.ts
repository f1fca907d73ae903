/** Pure unit tests of the supervisors' heartbeat (fake timers and a fake answer; no child process). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startHeartbeat } from '../../core/supervisor/heartbeat.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('heartbeat', () => {
  it('never calls a child hung while it answers as alive', async () => {
    const onHung = vi.fn();
    const alive = vi.fn(async () => true);
    const stop = startHeartbeat({ everyMs: 100, hangAfterMs: 250, alive, onHung });
    await vi.advanceTimersByTimeAsync(2000);
    stop();
    expect(onHung).not.toHaveBeenCalled();
    expect(alive.mock.calls.length).toBeGreaterThanOrEqual(19);
  });

  it('calls a silent child hung once, past the bound, then asks no more', async () => {
    const onHung = vi.fn();
    // A child that never answers: one question stays outstanding, so no second one is asked while it waits.
    const alive = vi.fn(() => new Promise<boolean>(() => {}));
    startHeartbeat({ everyMs: 100, hangAfterMs: 250, alive, onHung });
    await vi.advanceTimersByTimeAsync(2000);
    expect(onHung).toHaveBeenCalledTimes(1);
    expect(onHung.mock.calls[0]![0]).toBeGreaterThan(250);
    expect(alive).toHaveBeenCalledTimes(1);
  });

  it('counts an answer that is not alive (llama-server’s /health not 200, a failed ping) as silence', async () => {
    const onHung = vi.fn();
    const answers = [async () => false, async () => Promise.reject(new Error('refused'))];
    let asked = 0;
    startHeartbeat({ everyMs: 100, hangAfterMs: 250, alive: () => answers[asked++ % 2]!(), onHung });
    await vi.advanceTimersByTimeAsync(1000);
    expect(onHung).toHaveBeenCalledTimes(1);
    expect(asked).toBeGreaterThanOrEqual(2);
  });

  it('stops beating when stopped', async () => {
    const onHung = vi.fn();
    const alive = vi.fn(() => new Promise<boolean>(() => {}));
    const stop = startHeartbeat({ everyMs: 100, hangAfterMs: 250, alive, onHung });
    stop();
    await vi.advanceTimersByTimeAsync(2000);
    expect(alive).not.toHaveBeenCalled();
    expect(onHung).not.toHaveBeenCalled();
  });
});
