/**
 * The Hub search against a loopback Hub that answers as the Hub's API does: GGUF repositories by words,
 * a repository's GGUF files with their sizes and URIs (its README left out); an unreachable Hub and a
 * repository name that is not owner/name are refused in words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubSearchError, hubFiles, searchHub } from '../../core/models/hub-search.js';
import { startLoopbackHub, type LoopbackHub } from '../helpers/loopback-hub.js';

let hub: LoopbackHub;
beforeAll(async () => {
  hub = await startLoopbackHub([
    { path: 'test-org/lighthouse-GGUF/lighthouse-Q8_0.gguf', bytes: Buffer.alloc(2048) },
    { path: 'test-org/lighthouse-GGUF/lighthouse-Q4_K_M.gguf', bytes: Buffer.alloc(1024) },
    { path: 'other/river-GGUF/river.gguf', bytes: Buffer.alloc(10) },
  ]);
});
afterAll(() => hub.close());

describe('the Hub search', () => {
  it("finds GGUF repositories by words and lists a repository's GGUF files with their sizes", async () => {
    expect(await searchHub('lighthouse', { endpoint: hub.endpoint })).toEqual([{ id: 'test-org/lighthouse-GGUF', downloads: 100 }]);
    expect(hub.requests.at(-1)?.path).toBe('/api/models');
    expect(await hubFiles('test-org/lighthouse-GGUF', { endpoint: hub.endpoint })).toEqual([
      { path: 'lighthouse-Q4_K_M.gguf', bytes: 1024, uri: 'hf:test-org/lighthouse-GGUF/lighthouse-Q4_K_M.gguf' },
      { path: 'lighthouse-Q8_0.gguf', bytes: 2048, uri: 'hf:test-org/lighthouse-GGUF/lighthouse-Q8_0.gguf' },
    ]);
  });

  it('names an unreachable Hub, a missing repository and a name that is not owner/name', async () => {
    await expect(searchHub('x', { endpoint: 'http://127.0.0.1:9' })).rejects.toThrow(
      new HubSearchError('cannot reach 127.0.0.1:9: this machine is offline or the Hub is blocked'),
    );
    await expect(hubFiles('nobody/nothing', { endpoint: hub.endpoint })).rejects.toThrow(/answered 404/);
    await expect(hubFiles('../etc', { endpoint: hub.endpoint })).rejects.toThrow('repo: ../etc is not owner/name');
  });
});
