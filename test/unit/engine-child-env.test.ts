/**
 * The engine child's environment: the replica's env kept, and libuv's pool sized to the slots up to libuv's own four, on more than one CPU, unless the
 * user set it.
 */
import { describe, expect, it } from 'vitest';
import { engineChildEnv, engineThreadpoolSize, LIBUV_DEFAULT_THREADPOOL } from '../../core/engine/engine-child-env.js';

describe('engine child env', () => {
  it('keeps the replica env and gives one pool thread a slot, up to libuv default', () => {
    const replica = { CUDA_VISIBLE_DEVICES: '1', OTHER: 'x' };
    expect(engineChildEnv(replica, 1, 2, {})).toEqual({ ...replica, UV_THREADPOOL_SIZE: '1' });
    expect(engineChildEnv(replica, 3, 2, {}).UV_THREADPOOL_SIZE).toBe('3');
    expect(engineChildEnv(replica, 4, 2, {}).UV_THREADPOOL_SIZE).toBe(String(LIBUV_DEFAULT_THREADPOOL));
    expect(engineChildEnv(replica, 64, 16, {}).UV_THREADPOOL_SIZE).toBe(String(LIBUV_DEFAULT_THREADPOOL));
    expect(replica).toEqual({ CUDA_VISIBLE_DEVICES: '1', OTHER: 'x' });
  });

  it('leaves libuv its default on one CPU, where its threads take turns anyway', () => {
    expect(engineChildEnv({ A: '1' }, 1, 1, {})).toEqual({ A: '1' });
    expect(engineThreadpoolSize(1, 1)).toBe(LIBUV_DEFAULT_THREADPOOL);
  });

  it('leaves a size the user set, in the replica env or in core own env', () => {
    expect(engineChildEnv({ UV_THREADPOOL_SIZE: '8' }, 1, 2, {})).toEqual({ UV_THREADPOOL_SIZE: '8' });
    // Core's own env reaches the child through the spawn's merge; the sizing adds nothing over it.
    expect(engineChildEnv({ A: '1' }, 1, 2, { UV_THREADPOOL_SIZE: '6' })).toEqual({ A: '1' });
  });
});
