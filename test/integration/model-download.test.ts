/**
 * Model downloads through node-llama-cpp's downloader from a loopback stand-in for the Hugging Face Hub
 * serving the generated test model (never the internet): a full download lands checked in the models
 * folder; the `:QUANT` form; an interrupted download resumes; a cancelled one leaves nothing; a missing file, a file that is not a GGUF
 * and a stalled server each end in words; a split GGUF lands as all its parts.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DownloadProgress } from '../../common/model-download.js';
import { downloadModel, ModelDownloadError, partialFolder } from '../../core/models/model-download.js';
import { testModelPath } from '../helpers/engines.js';
import { startLoopbackHub, writePaddedTestModel, writeSplitTestModel, type LoopbackHub } from '../helpers/loopback-hub.js';

describe('model download from a Hub', () => {
  let dir: string;
  let hub: LoopbackHub;
  let model: Buffer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'manifold-download-'));
    model = await readFile(testModelPath());
    hub = await startLoopbackHub([{ path: 'test-org/tiny/tiny.gguf', bytes: model }]);
  });
  afterAll(async () => {
    await hub?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const modelsDir = async (name: string): Promise<string> => mkdtemp(join(dir, `${name}-`));
  const failure = async (promise: Promise<unknown>): Promise<ModelDownloadError> => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelDownloadError);
    return error as ModelDownloadError;
  };

  it('downloads hf:owner/repo/file.gguf into the models folder, checked, with progress', async () => {
    const folder = await modelsDir('full');
    const progress: DownloadProgress[] = [];
    const result = await downloadModel({
      uri: 'hf:test-org/tiny/tiny.gguf',
      modelsDir: folder,
      hubEndpoint: hub.endpoint,
      onProgress: (p) => progress.push(p),
    });
    expect(result.path).toBe(join(folder, 'hf_test-org_tiny_tiny.gguf'));
    expect((await readFile(result.path)).equals(model)).toBe(true);
    expect(result.bytes).toBe(model.length);
    expect(progress[0]!.state).toBe('resolving');
    expect(progress.some((p) => p.state === 'downloading' && p.totalBytes === model.length)).toBe(true);
    expect(progress.at(-1)).toMatchObject({ state: 'done', path: result.path, downloadedBytes: model.length, totalBytes: model.length });
    expect(await readdir(join(folder, '.partial'))).toEqual([]);
    expect(hub.requests.some((r) => r.path === '/test-org/tiny/resolve/main/tiny.gguf')).toBe(true);
  });

  it('resolves hf:owner/repo:QUANT through the manifest and honours HF_ENDPOINT', async () => {
    hub.host({ path: 'test-org/quant/quant-Q4_K_M.gguf', bytes: model });
    hub.manifest('test-org/quant:Q4_K_M', 'quant-Q4_K_M.gguf');
    const folder = await modelsDir('quant');
    process.env.HF_ENDPOINT = hub.endpoint;
    try {
      const result = await downloadModel({ uri: 'hf:test-org/quant:Q4_K_M', modelsDir: folder });
      expect((await readFile(result.path)).equals(model)).toBe(true);
      expect(await readdir(folder)).toContain(result.path.slice(folder.length + 1));
    } finally {
      delete process.env.HF_ENDPOINT;
    }
    expect(hub.requests.some((r) => r.path === '/v2/test-org/quant/manifests/Q4_K_M')).toBe(true);
  });

  it('a stalled server ends the download in words, keeps the partial file, and the next pull resumes it', async () => {
    // Larger than the downloader's 5 MiB chunk, stalled in its third chunk: the first two are kept.
    await writePaddedTestModel(join(dir, 'padded.gguf'), 12 << 20);
    const padded = await readFile(join(dir, 'padded.gguf'));
    hub.host({ path: 'test-org/stall/stall.gguf', bytes: padded, stallAtByte: 11 << 20 });
    const folder = await modelsDir('stall');
    const uri = 'hf:test-org/stall/stall.gguf';
    const error = await failure(downloadModel({ uri, modelsDir: folder, hubEndpoint: hub.endpoint, stallMs: 1500 }));
    expect(error.code).toBe('stalled');
    expect(error.message).toMatch(/stalled: no data from the server for 1.5 s after \d+ of \d+ bytes; pull it again to resume/);
    expect(await readdir(partialFolder(folder, uri))).not.toEqual([]);
    expect(await readdir(folder)).toEqual(['.partial']);

    hub.host({ path: 'test-org/stall/stall.gguf', bytes: padded });
    const before = hub.requests.length;
    const result = await downloadModel({ uri, modelsDir: folder, hubEndpoint: hub.endpoint, stallMs: 5000 });
    expect((await readFile(result.path)).equals(padded)).toBe(true);
    const resumed = hub.requests.slice(before).filter((r) => r.method === 'GET' && r.path.endsWith('/stall.gguf'));
    expect(resumed.length).toBeGreaterThan(0);
    // The resume asks only for what the partial file lacks.
    const from = resumed.map((r) => Number(/^bytes=(\d+)-/.exec(r.range ?? '')?.[1] ?? -1)).filter((start) => start >= 0);
    expect(Math.min(...from)).toBe(10 << 20);
  });

  it('a cancelled download ends as cancelled and leaves nothing behind', async () => {
    hub.host({ path: 'test-org/slow/slow.gguf', bytes: model, bytesPerSecond: 200_000 });
    const folder = await modelsDir('cancel');
    const uri = 'hf:test-org/slow/slow.gguf';
    const controller = new AbortController();
    const error = await failure(
      downloadModel({
        uri,
        modelsDir: folder,
        hubEndpoint: hub.endpoint,
        signal: controller.signal,
        onProgress: (p) => p.downloadedBytes > 0 && controller.abort(),
      }),
    );
    expect(error).toMatchObject({ code: 'cancelled', message: `download of ${uri} cancelled` });
    expect(await readdir(join(folder, '.partial'))).toEqual([]);
    expect((await readdir(folder)).filter((f) => f.endsWith('.gguf'))).toEqual([]);
  });

  it('a missing file is refused in words, leaving nothing behind', async () => {
    const folder = await modelsDir('missing');
    const error = await failure(downloadModel({ uri: 'hf:test-org/tiny/absent.gguf', modelsDir: folder, hubEndpoint: hub.endpoint }));
    expect(error.code).toBe('failed');
    expect(error.message).toMatch(/cannot download hf:test-org\/tiny\/absent\.gguf: .*404/);
    expect((await readdir(folder)).filter((f) => f.endsWith('.gguf'))).toEqual([]);
  });

  it('an unreachable Hub is named as such, once, and leaves no empty staging folder', async () => {
    const folder = await modelsDir('offline');
    // A port nothing listens on: the connection is refused, as offline or behind a firewall.
    const error = await failure(downloadModel({ uri: 'hf:test-org/tiny:Q8_0', modelsDir: folder, hubEndpoint: 'http://127.0.0.1:9' }));
    expect(error.code).toBe('failed');
    expect(error.message).toMatch(
      /^cannot reach 127\.0\.0\.1:9 to download hf:test-org\/tiny:Q8_0: this machine is offline or the host is blocked( \(E[A-Z]+\))?$/,
    );
    expect(await readdir(folder)).toEqual([]);
  });

  it('a file that is not a GGUF is refused by the header check and removed', async () => {
    hub.host({ path: 'test-org/fake/fake.gguf', bytes: Buffer.from('<html>not a model</html>'.repeat(1000)) });
    const folder = await modelsDir('fake');
    const error = await failure(downloadModel({ uri: 'hf:test-org/fake/fake.gguf', modelsDir: folder, hubEndpoint: hub.endpoint }));
    expect(error.code).toBe('not_gguf');
    expect(error.message).toMatch(/hf:test-org\/fake\/fake\.gguf is not a usable GGUF model \(.*\); the downloaded file was removed/);
    expect(await readdir(folder)).toEqual(['.partial']);
    expect(await readdir(join(folder, '.partial'))).toEqual([]);
  });

  it('downloads every part of a split GGUF', async () => {
    const parts = await writeSplitTestModel(dir, 'split', 2);
    for (const part of parts) hub.host({ path: `test-org/split/${part.slice(dir.length + 1)}`, bytes: await readFile(part) });
    const folder = await modelsDir('split');
    const result = await downloadModel({ uri: 'hf:test-org/split/split-00001-of-00002.gguf', modelsDir: folder, hubEndpoint: hub.endpoint });
    expect(result.path).toBe(join(folder, 'hf_test-org_split_split-00001-of-00002.gguf'));
    expect(result.files.map((f) => f.slice(folder.length + 1)).sort()).toEqual([
      'hf_test-org_split_split-00001-of-00002.gguf',
      'hf_test-org_split_split-00002-of-00002.gguf',
    ]);
    for (const [i, part] of parts.entries()) expect((await readFile(result.files.sort()[i]!)).equals(await readFile(part))).toBe(true);
  });
});
