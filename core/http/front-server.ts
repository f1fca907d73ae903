/**
 * The front (DESIGN §7): one HTTP server on loopback by default, serving the OpenAI-compatible API
 * (`/v1/*` and llama-server's `/tokenize` and `/detokenize`, optional API key), `/health`, `/metrics`, `/slots`, the control WebSocket (`/control`, the
 * control token; a plain `GET /control` answers 204 with it, 401 without, for the UI to tell a refused token from a server that is gone), the admin
 * calls (`/admin/*`, the same token), and the UI's page. Every request passes the Host and Origin checks first; bodies
 * are size-limited JSON; every failure is a 4xx/5xx with a message, never a crash of the process.
 * `drain` is the front's part of a graceful stop: new requests get 503, open generations get a grace
 * period and are then ended cleanly (`../open-generations.ts`).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import type { Duplex } from 'node:stream';
import { contractHandlers } from '../contract-handlers.js';
import type { Workstation } from '../workstation.js';
import { ADMIN_CALLS, handleAdminCall } from './admin-routes.js';
import { ControlSocket } from './control-socket.js';
import { HttpError, sendError, sendJson, toHttpError } from './http-error.js';
import { metricsRegistry } from './metrics.js';
import { OpenGenerations, type DrainReport } from '../open-generations.js';
import { handleEmbeddings } from './embeddings-route.js';
import { handleChatCompletions, handleCompletions, handleModel, handleModels } from './openai-routes.js';
import { bearer, checkSource, readJsonBody, sameSecret } from './request-guard.js';
import { handleDetokenize, handleTokenize } from './tokenize-routes.js';

export interface FrontOptions {
  /** 127.0.0.1 unless set; binding elsewhere exposes the API beyond this machine. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When `port` is taken, take a free one instead of failing (the desktop app; the CLI fails clearly). */
  anyPortIfTaken?: boolean;
  /** Required as `Authorization: Bearer <key>` on /v1/* when set. */
  apiKey?: string | null;
  /** Host names served besides loopback (for a reverse proxy or a LAN name). */
  allowedHosts?: readonly string[];
  /** Largest request body accepted. */
  bodyLimitBytes?: number;
  /** The built renderer (`dist/renderer`): `index.html` at `/`, its files under `/assets/`. */
  uiDir?: string | null;
  eventIntervalMs?: number;
  /** The control token (`../control-token.ts` keeps it in the data dir); a fresh random one when not given. */
  token?: string;
}

export interface Front {
  readonly url: string;
  /** The control API's token (kept across starts when serve was given a data dir). */
  readonly token: string;
  readonly dashboardUrl: string;
  /** Generations whose responses have not ended yet. */
  readonly openGenerations: number;
  /**
   * Stops taking requests (each new one is a 503 "the server is shutting down" with Retry-After), waits
   * up to `graceMs` for the open generations, then ends those left: a stream with an SSE error event
   * (code `server_shutdown`) and `[DONE]`, a JSON answer with a 503.
   */
  drain(graceMs: number, signal?: AbortSignal): Promise<DrainReport>;
  close(): Promise<void>;
}

/** The port asked for is in use; the front does not take another unless told to (`anyPortIfTaken`). */
export class PortTakenError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`port ${port} on ${host} is taken (another Manifold or llama-server?)`);
    this.name = 'PortTakenError';
  }
}

/** llama-server's tokenizer endpoints: outside `/v1/`, behind the API key as llama-server puts them. */
const TOKENIZER_PATHS = new Set(['/tokenize', '/detokenize']);

/** A model name from a URL path (its `/` may come escaped or not); a 400 for an escape that is not one. */
function decodeModelName(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, 'the model name in the path is not valid percent-encoding', 'invalid_request_error', 'model');
  }
}

/** The answer to a request that arrives while the server drains, and the end of a generation cut short. */
function shuttingDown(retryAfterSeconds: number): HttpError {
  return new HttpError(503, 'the server is shutting down', 'server_error', null, 'server_shutdown', {
    'retry-after': String(retryAfterSeconds),
    connection: 'close',
  });
}

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const UI_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** One file of the built UI: `index.html` or `assets/<name>` (plain names only, no way out of the folder). */
async function sendUiFile(uiDir: string | null, name: string, res: ServerResponse): Promise<void> {
  if (!uiDir) throw new HttpError(404, 'no UI is built into this server (npm run build:ui)');
  if (!/^(index\.html|assets\/[A-Za-z0-9_.-]+)$/.test(name) || name.includes('..')) throw new HttpError(404, `no UI file ${name}`);
  const type = UI_TYPES[extname(name)];
  if (!type) throw new HttpError(404, `no UI file ${name}`);
  const body = await readFile(join(uiDir, name)).catch(() => {
    throw new HttpError(404, name === 'index.html' ? 'the UI is not built (npm run build:ui)' : `no UI file ${name}`);
  });
  res.writeHead(200, { 'content-type': type, 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' });
  res.end(body);
}

export async function startFront(workstation: Workstation, options: FrontOptions = {}): Promise<Front> {
  const token = options.token ?? randomBytes(24).toString('hex');
  const allowedHosts = options.allowedHosts ?? [];
  const bodyLimit = options.bodyLimitBytes ?? 1024 * 1024;
  const handlers = contractHandlers(workstation);
  const control = new ControlSocket(workstation, handlers, options.eventIntervalMs);
  const open = new OpenGenerations<HttpError>();
  const metrics = metricsRegistry(workstation);
  /** While draining, the seconds a refused client is asked to wait (the grace period, at least 1). */
  let drainRetryAfter: number | null = null;

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const arrivedAt = performance.now();
    if (drainRetryAfter !== null) throw shuttingDown(drainRetryAfter);
    checkSource(req, allowedHosts);
    const url = new URL(req.url ?? '/', 'http://front.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if ((path.startsWith('/v1/') || TOKENIZER_PATHS.has(path)) && options.apiKey && !sameSecret(bearer(req, url, false), options.apiKey)) {
      throw new HttpError(401, 'a valid API key is required: Authorization: Bearer <key>', 'authentication_error');
    }
    const only = (allowed: string): void => {
      if (method !== allowed) throw new HttpError(405, `${path} takes ${allowed}, not ${method}`);
    };
    const adminCall = ADMIN_CALLS.get(path);
    if (adminCall || path === '/control') {
      if (!sameSecret(bearer(req, url, !adminCall), token))
        throw new HttpError(401, 'the control token is required: Authorization: Bearer <token> (printed at start)', 'authentication_error');
    }
    if (path === '/control') {
      only('GET');
      res.writeHead(204, { 'cache-control': 'no-store' });
      res.end();
      return;
    }
    if (adminCall) {
      only('POST');
      return handleAdminCall(handlers, adminCall, await readJsonBody(req, bodyLimit), res);
    }
    switch (path) {
      case '/v1/chat/completions':
        only('POST');
        return handleChatCompletions(workstation, open, await readJsonBody(req, bodyLimit), res, arrivedAt);
      case '/v1/completions':
        only('POST');
        return handleCompletions(workstation, open, await readJsonBody(req, bodyLimit), res, arrivedAt);
      case '/v1/embeddings':
        only('POST');
        return handleEmbeddings(workstation, await readJsonBody(req, bodyLimit), res);
      case '/v1/models':
        only('GET');
        return handleModels(workstation, res);
      case '/tokenize':
        only('POST');
        return handleTokenize(workstation, await readJsonBody(req, bodyLimit), res);
      case '/detokenize':
        only('POST');
        return handleDetokenize(workstation, await readJsonBody(req, bodyLimit), res);
      case '/health': {
        only('GET');
        const { status, reasons } = workstation.status();
        return sendJson(res, status === 'error' || status === 'idle' ? 503 : 200, { status, reasons, ...workstation.replicas.info() });
      }
      case '/slots':
        only('GET');
        return sendJson(res, 200, await workstation.replicas.slotsView());
      case '/metrics': {
        only('GET');
        const text = await metrics.metrics();
        res.writeHead(200, { 'content-type': metrics.contentType });
        res.end(text);
        return;
      }
      case '/':
        only('GET');
        return sendUiFile(options.uiDir ?? null, 'index.html', res);
      default:
        if (path.startsWith('/v1/models/')) {
          only('GET');
          return handleModel(workstation, decodeModelName(path.slice('/v1/models/'.length)), res);
        }
        if (path.startsWith('/assets/')) {
          only('GET');
          return sendUiFile(options.uiDir ?? null, path.slice(1), res);
        }
        throw new HttpError(404, `no route ${method} ${path}`);
    }
  };

  // Host is checked by checkHost (403), not by the parser (which would answer 400).
  const server: Server = createServer({ requireHostHeader: false }, (req, res) => {
    route(req, res).catch((error: unknown) => {
      const failure = toHttpError(error, (line) => workstation.log.error(`${line} (${req.method} ${req.url})`));
      // A 503 (no replica, no model, shutting down) is a state the workstation reports elsewhere; a 500 is a fault.
      if (failure.status >= 500 && failure.code !== 'server_shutdown')
        workstation.log.write(failure.status === 503 ? 'warn' : 'error', `front: ${req.method} ${req.url}: ${failure.status} ${failure.message}`);
      sendError(res, failure);
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: number, message: string): void => {
      socket.end(`HTTP/1.1 ${status} ${message}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (drainRetryAfter !== null) return refuse(503, 'Service Unavailable');
    try {
      checkSource(req, allowedHosts);
    } catch {
      return refuse(403, 'Forbidden');
    }
    const url = new URL(req.url ?? '/', 'http://front.invalid');
    if (url.pathname !== '/control') return refuse(404, 'Not Found');
    if (!sameSecret(bearer(req, url, true), token)) return refuse(401, 'Unauthorized');
    control.handleUpgrade(req, socket, head);
  });
  server.on('clientError', (_error, socket) => socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'));

  const host = options.host ?? '127.0.0.1';
  const listen = (port: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(options.port ?? 0).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    if (!options.anyPortIfTaken) throw new PortTakenError(host, options.port ?? 0);
    workstation.log.warn(`front: port ${options.port} is taken; using a free one`);
    await listen(0);
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}`;
  return {
    url,
    token,
    dashboardUrl: `${url}/?token=${token}`,
    get openGenerations() {
      return open.size;
    },
    drain: (graceMs, signal) => {
      drainRetryAfter = Math.max(1, Math.ceil(graceMs / 1000));
      server.closeIdleConnections();
      return open.drain(graceMs, shuttingDown(drainRetryAfter), signal);
    },
    close: async () => {
      control.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if (drainRetryAfter === null) server.closeAllConnections();
      else {
        // After a drain, the last events of cut streams may still be on their way: connections close as
        // they go idle, and any left after a second are dropped.
        const idle = setInterval(() => server.closeIdleConnections(), 50);
        const force = setTimeout(() => server.closeAllConnections(), 1000);
        await closed;
        clearInterval(idle);
        clearTimeout(force);
      }
      await closed;
    },
  };
}
