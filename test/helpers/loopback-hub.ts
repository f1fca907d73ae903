/**
 * A loopback stand-in for the Hugging Face Hub, as node-llama-cpp's downloader speaks to it:
 * `/{owner}/{repo}/resolve/main/{file}` serves a file's bytes (HEAD and ranges, as the Hub's resolve
 * endpoint does) and `/v2/{owner}/{repo}/manifests/{tag}` names the file of a quantisation (the
 * `hf:owner/repo:Q4_K_M` form); `/api/models?search=` and `/api/models/{owner}/{repo}/tree/main` answer as the
 * Hub's model search and file listing do (over the hosted files). Faults on demand: a file that stalls at some byte (hosted again without
 * the fault, a second pull can resume), and a rate cap so a progress bar can be seen moving. Every request
 * is logged with its range, so a test can see a resume ask for the rest only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gguf, writeGguf } from '../../build/gguf-writer.js';
import { describeTestModel, TEST_MODEL_SIZES } from '../../build/test-model.js';
import { writeRangeHead } from './byte-range.js';

export interface HubFile {
  /** `owner/repo/file.gguf` */
  readonly path: string;
  readonly bytes: Buffer;
  /** Every GET stops before this byte of the file and sends nothing more (the connection stays open). */
  readonly stallAtByte?: number;
  /** Serve at most this many bytes a second. */
  readonly bytesPerSecond?: number;
}

export interface HubRequest {
  readonly method: string;
  readonly path: string;
  readonly range: string | null;
}

export interface LoopbackHub {
  /** The endpoint to give the downloader (HF_ENDPOINT), with its trailing slash. */
  readonly endpoint: string;
  readonly requests: HubRequest[];
  /** Sets (or replaces) a file served. */
  host(file: HubFile): void;
  /** `owner/repo:TAG` → the file name in that repo. */
  manifest(repoTag: string, fileName: string): void;
  close(): Promise<void>;
}

export async function startLoopbackHub(files: readonly HubFile[] = []): Promise<LoopbackHub> {
  const hosted = new Map(files.map((f) => [f.path, f]));
  const manifests = new Map<string, string>();
  const open = new Set<ServerResponse>();
  const requests: HubRequest[] = [];

  const serveFile = (request: IncomingMessage, response: ServerResponse, file: HubFile): void => {
    const { start, body } = writeRangeHead(request, response, file.bytes, { etag: `"${file.bytes.length}"` });
    if (request.method === 'HEAD') return void response.end();
    const sendable = file.stallAtByte === undefined ? body.length : Math.min(body.length, Math.max(0, file.stallAtByte - start));
    const rate = file.bytesPerSecond ?? Infinity;
    const tickMs = 50;
    const perTick = Number.isFinite(rate) ? Math.max(1, Math.floor((rate * tickMs) / 1000)) : sendable;
    let offset = 0;
    const pump = (): void => {
      if (response.destroyed) return;
      const piece = body.subarray(offset, Math.min(sendable, offset + perTick));
      offset += piece.length;
      if (offset >= body.length) return void response.end(piece);
      if (piece.length > 0) response.write(piece);
      if (offset < sendable) setTimeout(pump, Number.isFinite(rate) ? tickMs : 0);
      // else: stalled, the connection stays open with nothing more to come.
    };
    pump();
  };

  const server: Server = createServer((request, response) => {
    open.add(response);
    response.on('close', () => open.delete(response));
    const url = new URL(request.url ?? '/', 'http://loopback');
    const path = decodeURIComponent(url.pathname);
    requests.push({ method: request.method ?? 'GET', path, range: request.headers.range ?? null });
    const manifest = /^\/v2\/([^/]+)\/([^/]+)\/manifests\/([^/]+)$/.exec(path);
    if (manifest) {
      const fileName = manifests.get(`${manifest[1]}/${manifest[2]}:${manifest[3]!.toUpperCase()}`);
      if (!fileName) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Repository not found"}');
      return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ggufFile: { rfilename: fileName } }));
    }
    // The Hub's API: the model search (every hosted repository whose name holds the words) and a repository's files.
    if (path === '/api/models') {
      const search = (url.searchParams.get('search') ?? '').toLowerCase();
      const repos = [...new Set([...hosted.keys()].map((p) => p.split('/').slice(0, 2).join('/')))].filter((repo) => repo.toLowerCase().includes(search));
      return void response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(repos.map((id, i) => ({ _id: String(i), id, downloads: 100 - i, likes: 0, tags: ['gguf'] }))));
    }
    const tree = /^\/api\/models\/([^/]+)\/([^/]+)\/tree\/[^/]+$/.exec(path);
    if (tree) {
      const files = [...hosted.values()].filter((f) => f.path.startsWith(`${tree[1]}/${tree[2]}/`));
      if (files.length === 0) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Repository not found"}');
      const entries = files.map((f) => ({
        type: 'file',
        oid: 'x',
        size: f.bytes.length,
        path: f.path.split('/').slice(2).join('/'),
        lfs: { oid: 'y', size: f.bytes.length, pointerSize: 134 },
      }));
      return void response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify([{ type: 'file', oid: 'z', size: 12, path: 'README.md' }, ...entries]));
    }
    const resolve = /^\/([^/]+)\/([^/]+)\/resolve\/[^/]+\/(.+)$/.exec(path);
    const file = resolve ? hosted.get(`${resolve[1]}/${resolve[2]}/${resolve[3]}`) : undefined;
    if (!file) return void response.writeHead(404, { 'content-type': 'application/json', 'x-error-code': 'EntryNotFound' }).end('{"error":"Entry not found"}');
    serveFile(request, response, file);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    host: (file) => void hosted.set(file.path, file),
    manifest: (repoTag, fileName) =>
      void manifests.set(
        repoTag.replace(/:(.+)$/, (_m, tag: string) => `:${tag.toUpperCase()}`),
        fileName,
      ),
    close: () =>
      new Promise((resolve) => {
        for (const response of open) response.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The tiny test model with a padding tensor of `paddingBytes` (f32, never read by anything): a valid GGUF
 * larger than the downloader's 5 MiB chunk, whose partial download therefore keeps whole chunks to resume from.
 */
export async function writePaddedTestModel(path: string, paddingBytes: number): Promise<void> {
  const { metadata, tensors } = describeTestModel(TEST_MODEL_SIZES.tiny);
  const floats = Math.ceil(paddingBytes / 4);
  const padding = { name: 'manifold.padding', dims: [floats], type: 0, data: () => new Uint8Array(floats * 4).fill(7) };
  await writeGguf(path, metadata, [...tensors, padding]);
}

/** The tiny test model written as a split GGUF of `parts` files (llama.cpp's `split.*` keys), for the hub to serve. */
export async function writeSplitTestModel(dir: string, baseName: string, parts: number): Promise<string[]> {
  const { metadata, tensors } = describeTestModel(TEST_MODEL_SIZES.tiny);
  const per = Math.ceil(tensors.length / parts);
  const paths: string[] = [];
  for (let i = 0; i < parts; i++) {
    const name = `${baseName}-${String(i + 1).padStart(5, '0')}-of-${String(parts).padStart(5, '0')}.gguf`;
    const split: [string, ReturnType<typeof gguf.u32>][] = [
      ['split.no', gguf.u32(i)],
      ['split.count', gguf.u32(parts)],
      ['split.tensors.count', gguf.i32(tensors.length)],
    ];
    const path = `${dir}/${name}`;
    await writeGguf(path, i === 0 ? [...metadata, ...split] : split, tensors.slice(i * per, (i + 1) * per));
    paths.push(path);
  }
  return paths;
}
