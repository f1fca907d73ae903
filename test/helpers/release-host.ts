/**
 * A loopback stand-in for GitHub's releases: `GET /repos/<repo>/releases/tags/<tag>` answers the release
 * JSON (each asset with its download URL on this server and its `sha256:` digest, or a wrong one when
 * asked), and `/download/<name>` serves the archive bytes with ranges, as GitHub's asset host does.
 * Archives are made here: a .tar.gz with the `tar` package, a .zip by a minimal stored-entry writer.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, gzipSync } from 'node:zlib';
import { create as createTar } from 'tar';
import { readFile } from 'node:fs/promises';
import { writeRangeHead } from './byte-range.js';

export interface HostedAsset {
  readonly name: string;
  readonly bytes: Buffer;
  /** Publish this digest instead of the real one (a tampered or mislabelled asset). */
  readonly digest?: string | null;
}

export interface ReleaseHost {
  readonly apiBase: string;
  close(): Promise<void>;
}

export async function hostRelease(repo: string, tag: string, assets: readonly HostedAsset[]): Promise<ReleaseHost> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://loopback');
    if (url.pathname === `/repos/${repo}/releases/tags/${tag}`) {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const json = {
        tag_name: tag,
        assets: assets.map((a) => ({
          name: a.name,
          size: a.bytes.length,
          browser_download_url: `${base}/download/${a.name}`,
          digest: a.digest === undefined ? `sha256:${createHash('sha256').update(a.bytes).digest('hex')}` : a.digest,
        })),
      };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      return;
    }
    const asset = assets.find((a) => url.pathname === `/download/${a.name}`);
    if (!asset) {
      response.writeHead(404).end('{"message":"Not Found"}');
      return;
    }
    const { body } = writeRangeHead(request, response, asset.bytes);
    response.end(request.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    apiBase: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A .tar.gz of `files` (path in the archive → file on disk), modes kept. */
export async function tarGz(cwd: string, paths: readonly string[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of createTar({ cwd, gzip: false, portable: true }, [...paths])) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks), { level: 1 });
}

/** A .zip of one file stored uncompressed (zip keeps no Unix mode here, as many zips do not). */
export async function storedZip(nameInZip: string, file: string): Promise<Buffer> {
  const data = await readFile(file);
  const name = Buffer.from(nameInZip);
  const crc = crc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(name.length, 28);
  const centralOffset = local.length + name.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return Buffer.concat([local, name, data, central, name, end]);
}
