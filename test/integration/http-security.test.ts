/** The front's security by default, each case against a running workstation; then the control WebSocket and a fuzz run. */
import { request } from 'node:http';
import { WebSocket } from 'ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { openControl } from '../helpers/control.js';
import { waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';
import { startFront } from '../../core/http/front-server.js';

type Served = Awaited<ReturnType<typeof startServed>>;
let served: Served;
let port: number;

beforeAll(async () => {
  served = await startServed({ replicas: 1 }, { front: { apiKey: 'sekret', bodyLimitBytes: 4096, eventIntervalMs: 100 } });
  port = Number(new URL(served.front.url).port);
});

interface Reply {
  status: number;
  body: string;
}

/** A raw HTTP request, so that Host and Origin can be anything. */
function raw(options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer; noHost?: boolean }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers, setHost: !options.noHost },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const auth = { authorization: 'Bearer sekret', 'content-type': 'application/json' };
const chat = (body: unknown, headers: Record<string, string> = auth) =>
  raw({ method: 'POST', path: '/v1/chat/completions', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
const message = (reply: Reply): string => (JSON.parse(reply.body) as { error: { message: string } }).error.message;

function upgrade(path: string, headers: Record<string, string> = {}): Promise<{ opened: boolean; status: number | null; socket: WebSocket }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
    socket.once('open', () => resolve({ opened: true, status: null, socket }));
    socket.once('unexpected-response', (_req, res) => resolve({ opened: false, status: res.statusCode ?? null, socket }));
    socket.once('error', () => resolve({ opened: false, status: null, socket }));
  });
}

describe('front security', () => {
  it('refuses a foreign Host (DNS rebinding) and a request without Host', async () => {
    const evil = await raw({ path: '/health', headers: { host: 'evil.example:80' } });
    expect(evil.status).toBe(403);
    expect(message(evil)).toContain('evil.example');
    expect((await raw({ path: '/health', noHost: true })).status).toBe(403);
    expect((await raw({ path: '/health', headers: { host: '' }, noHost: true })).status).toBe(403);
    expect((await raw({ path: '/health', headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect((await raw({ path: '/health', headers: { host: `[::1]:${port}` } })).status).toBe(200);
  });

  it('refuses a foreign Origin, and takes its own', async () => {
    const foreign = await raw({ path: '/v1/models', headers: { origin: 'https://evil.example', authorization: 'Bearer sekret' } });
    expect(foreign.status).toBe(403);
    expect(message(foreign)).toContain('cross-origin');
    expect((await raw({ path: '/v1/models', headers: { origin: 'null', authorization: 'Bearer sekret' } })).status).toBe(403);
    expect((await raw({ path: '/v1/models', headers: { origin: `http://127.0.0.1:${port}`, authorization: 'Bearer sekret' } })).status).toBe(200);
  });

  it('needs the API key on /v1/*', async () => {
    expect((await raw({ path: '/v1/models' })).status).toBe(401);
    expect((await raw({ path: '/v1/models', headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await raw({ path: '/v1/models', headers: auth })).status).toBe(200);
    // The scheme is case-insensitive (RFC 9110); the key is not.
    expect((await raw({ path: '/v1/models', headers: { authorization: 'bearer sekret' } })).status).toBe(200);
    expect((await raw({ path: '/v1/models', headers: { authorization: 'BEARER  sekret' } })).status).toBe(200);
    expect((await raw({ path: '/v1/models', headers: { authorization: 'bearer SEKRET' } })).status).toBe(401);
  });

  it('refuses a chunked body that grows over the limit with a 413 that closes its connection, and serves the next request', async () => {
    const refused = await new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', headers: { ...auth, 'transfer-encoding': 'chunked' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
        },
      );
      // The server may close while the rest is still being written: only a missing answer is a failure.
      req.on('error', (error) => setTimeout(() => reject(error), 1000));
      for (let i = 0; i < 4; i++) req.write(`{"pad":"${'x'.repeat(1500)}"}`);
      req.end();
    });
    expect(refused.status).toBe(413);
    expect(refused.connection).toBe('close');
    expect(message({ status: refused.status, body: refused.body })).toBe('request body is over the limit of 4096 bytes');
    expect((await raw({ path: '/health' })).status).toBe(200);
  });

  it('limits the body size, and names bad JSON and wrong types', async () => {
    const big = await chat({ messages: [{ role: 'user', content: 'x'.repeat(10_000) }] });
    expect(big.status).toBe(413);
    const badJson = await chat('{"messages": [');
    expect(badJson.status).toBe(400);
    expect(message(badJson)).toMatch(/^invalid JSON/);
    const wrongType = await chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 'many' });
    expect(wrongType.status).toBe(400);
    expect(message(wrongType)).toMatch(/^max_tokens: /);
    const wrongRole = await chat({ messages: [{ role: 'wizard', content: 'hi' }] });
    expect(message(wrongRole)).toBe('messages[0].role: must be one of "system", "developer", "user", "assistant", "tool" (got "wizard")');
    expect((await chat({ messages: [{ role: 'user', content: 'hi' }], model: 'other' })).status).toBe(404);
    const outsideVocabulary = await raw({ method: 'POST', path: '/v1/completions', headers: auth, body: JSON.stringify({ prompt: [1, 99_999_999] }) });
    expect(outsideVocabulary.status).toBe(400);
    expect(message(outsideVocabulary)).toContain('outside the model');
    const tooLong = await raw({
      method: 'POST',
      path: '/v1/completions',
      headers: auth,
      body: JSON.stringify({ prompt: Array.from({ length: 1030 }, () => 3) }),
    });
    expect(tooLong.status).toBe(400);
    // Refused by core before any engine sees it: the living replicas' context is known.
    expect(message(tooLong)).toBe('the prompt is 1030 tokens, and a slot holds 1024 (at least one token must be left to generate); shorten the prompt');
    expect((await raw({ method: 'GET', path: '/v1/chat/completions', headers: auth })).status).toBe(405);
    expect((await raw({ path: '/nowhere' })).status).toBe(404);
  });

  it('refuses a WebSocket upgrade without the token, with a foreign Origin, or to another path', async () => {
    const token = served.front.token;
    expect((await upgrade('/control')).status).toBe(401);
    expect((await upgrade('/control?token=wrong')).status).toBe(401);
    expect((await upgrade(`/control?token=${token}`, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await upgrade(`/elsewhere?token=${token}`)).status).toBe(404);
    const ok = await upgrade(`/control?token=${token}`, { origin: `http://127.0.0.1:${port}` });
    expect(ok.opened).toBe(true);
    ok.socket.close();
  });
});

describe('admin calls', () => {
  const admin = (path: string, body: unknown, headers: Record<string, string>) =>
    raw({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const withToken = () => ({ authorization: `Bearer ${served.front.token}` });

  it('need the control token: not the API key, not nothing', async () => {
    const body = { replica: 0, change: { contextSize: 2048 } };
    expect((await admin('/admin/rebuild', body, {})).status).toBe(401);
    expect((await admin('/admin/rebuild', body, { authorization: 'Bearer sekret' })).status).toBe(401);
    expect((await admin('/admin/precheck', body, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await raw({ path: '/admin/rebuild', headers: withToken() })).status).toBe(405);
  });

  it('refuse bad arguments with the field named, and answer the pre-check and the outcome', async () => {
    const empty = await admin('/admin/rebuild', { replica: 0, change: {} }, withToken());
    expect(empty.status).toBe(400);
    expect(message(empty)).toMatch(/^rebuild: change: name at least one/);
    const missing = await admin('/admin/rebuild', { replica: 5, change: { slots: 3 } }, withToken());
    expect(missing.status).toBe(400);
    expect(message(missing)).toContain('no replica 5');
    const precheck = await admin('/admin/precheck', { replica: 'all', change: { contextSize: 2048 } }, withToken());
    expect(precheck.status).toBe(200);
    expect(JSON.parse(precheck.body)).toMatchObject([{ replica: 0, fits: true, pools: ['kv'] }]);
    const rebuilt = await admin('/admin/rebuild', { replica: 0, change: { contextSize: 2048 } }, withToken());
    expect(rebuilt.status).toBe(200);
    expect(JSON.parse(rebuilt.body)).toMatchObject([{ replica: 0, outcome: 'Applied', engine_preserved: true, sizes: { contextSize: 2048 } }]);
    const after = await chat({ messages: [{ role: 'user', content: 'after the rebuild' }], max_tokens: 2 });
    expect(after.status).toBe(200);
  });
});

describe('control WebSocket', () => {
  it('serves the contract: calls with parsed arguments, and events pushed at a steady rate', async () => {
    const control = await openControl(served.front);
    const { messages, call } = control;
    control.socket.send('{not json');
    expect(await waitFor(() => messages.find((m) => m.type === 'result' && m.id === null), 'the answer to text that is not JSON')).toMatchObject({
      ok: false,
      error: 'invalid JSON',
    });
    expect(await call('getInfo', {})).toMatchObject({ ok: true, value: { status: 'ok', replicas: 1, routing: 'prefix' } });
    expect(await call('setRoutingPolicy', { policy: 'round-robin' })).toMatchObject({ ok: true, value: { policy: 'round-robin' } });
    expect(served.workstation.routingPolicy).toBe('round-robin');
    expect(await call('setRoutingPolicy', { policy: 'random' })).toMatchObject({ ok: false });
    expect((await call('teleport', {})).error).toMatch(/^unknown call "teleport"/);
    expect((await call('restartReplica', { replica: 9 })).error).toContain('no replica 9');
    await call('setRoutingPolicy', { policy: 'prefix' });
    const rebuilt = await call('rebuild', { replica: 0, change: { contextSize: 1280 } });
    expect(rebuilt).toMatchObject({ ok: true, value: [{ replica: 0, outcome: 'Applied' }] });
    const stages = messages
      .filter((m) => m.type === 'event' && m.name === 'rebuild')
      .map((m) => (m as unknown as { payload: { stage: string } }).payload.stage);
    expect(stages).toEqual(['precheck', 'barrier', 'rebuilding', 'done']);
    await new Promise((resolve) => setTimeout(resolve, 350));
    const events = messages.filter((m) => m.type === 'event');
    expect(events.filter((e) => e.name === 'throughput').length).toBeGreaterThanOrEqual(3);
    expect(events.some((e) => e.name === 'replicas')).toBe(true);
    expect(events.some((e) => e.name === 'slots')).toBe(true);
    control.socket.send('not json');
    control.close();
  });
});

describe('front fuzz', () => {
  it('answers a few hundred malformed requests with 4xx, never 5xx, and still serves', async () => {
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
    const values: unknown[] = [
      null,
      true,
      -1,
      1e308,
      'x',
      '',
      [],
      {},
      [1, 'a'],
      { role: 'user' },
      'a'.repeat(3000),
      [{ role: 'user', content: 5 }],
      [99999999],
    ];
    const fields = ['messages', 'prompt', 'max_tokens', 'temperature', 'stop', 'seed', 'stream', 'model', 'top_k', 'n', 'stream_options'];
    const statuses = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      const path = pick(['/v1/chat/completions', '/v1/completions', '/v1/models', '/health', '/metrics', '/v1/x', '/%zz', '/v1/completions?x=1']);
      const body: Record<string, unknown> = {};
      for (let f = 0; f < 1 + Math.floor(random() * 3); f++) body[pick(fields)] = pick(values);
      const text = pick([JSON.stringify(body), JSON.stringify(body).slice(0, 10), '\u0000\u0001', '[]', 'null', '']);
      const reply = await raw({
        method: pick(['POST', 'POST', 'GET', 'PUT', 'DELETE']),
        path,
        headers: pick([auth, { ...auth, 'content-type': 'text/plain' }, {}]),
        body: text,
      });
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      expect(reply.status, `${path} ${text.slice(0, 80)} → ${reply.body.slice(0, 200)}`).toBeLessThan(500);
    }
    expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
    const ok = await chat({ messages: [{ role: 'user', content: 'still there?' }], max_tokens: 2 });
    expect(ok.status).toBe(200);
  });
});

describe('front port', () => {
  it('fails clearly when its port is taken, or takes a free one when asked to', async () => {
    const taken = Number(new URL(served.front.url).port);
    await expect(startFront(served.workstation, { port: taken })).rejects.toThrow(`port ${taken} on 127.0.0.1 is taken (another Manifold or llama-server?)`);
    const other = await startFront(served.workstation, { port: taken, anyPortIfTaken: true });
    expect(Number(new URL(other.url).port)).not.toBe(taken);
    expect((await fetch(`${other.url}/health`)).status).toBe(200);
    await other.close();
  });
});
