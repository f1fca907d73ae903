/**
 * Stopping is graceful. `npm run serve` as a child with 2 CPU replicas: SIGTERM with 8 long streams
 * running ends each one with its full answer or an SSE `server_shutdown` error, then `[DONE]`, exits 0
 * and leaves no engine behind; with short answers and a long grace, all 8 finish normally; one Ctrl-C to
 * `npm run serve`'s process group (as a terminal sends it) drains the same way and a second one ends the
 * grace. In process:
 * during the drain new requests get 503 with Retry-After, a stream that ends frees the stop at once, a
 * JSON answer still open at the end of the grace gets a 503, and a chat answer is saved as interrupted.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Conversation } from '../../common/conversation.js';
import { processAlive } from '../../core/process-alive.js';
import { openControl } from '../helpers/control.js';
import { LONG_ANSWER_PROMPT, testModelPath, waitFor } from '../helpers/engines.js';
import { startServeChild } from '../helpers/serve-child.js';
import { startServed } from '../helpers/served.js';

/** One streamed chat completion read event by event. */
interface Stream {
  /** Every `data:` payload so far, in order. */
  events: string[];
  /** Resolves once a token has arrived (an event after the role chunk). */
  firstToken: Promise<void>;
  /** Resolves when the response has ended. */
  ended: Promise<void>;
  cancel(): Promise<void>;
}

async function openStream(base: string, body: Record<string, unknown>): Promise<Stream> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a very long story.' }], stream: true, ...body }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const events: string[] = [];
  let markToken: () => void = () => {};
  const firstToken = new Promise<void>((resolve) => (markToken = resolve));
  const ended = (async () => {
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += new TextDecoder().decode(value);
      const parts = buffered.split('\n\n');
      buffered = parts.pop()!;
      for (const part of parts) events.push(part.replace(/^data: /, ''));
      if (events.length > 1) markToken();
    }
  })();
  return { events, firstToken, ended, cancel: () => reader.cancel() };
}

type Ending = 'complete' | 'cut';

/** How a stream ended: a finish reason then [DONE], or a server_shutdown error then [DONE]; anything else fails. */
function ending(stream: Stream): Ending {
  const { events } = stream;
  expect(events.at(-1)).toBe('[DONE]');
  const last = JSON.parse(events.at(-2)!) as { error?: { code: string; message: string; type: string }; choices?: { finish_reason: string | null }[] };
  if (last.error) {
    expect(last.error).toEqual({ message: 'the server is shutting down', type: 'server_error', param: null, code: 'server_shutdown' });
    return 'cut';
  }
  expect(last.choices![0]!.finish_reason).toBe('length');
  return 'complete';
}

function writeConfig(extra: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'manifold-stop-'));
  const path = join(dir, 'run.json');
  writeFileSync(path, JSON.stringify({ model: testModelPath(), gpu: 'cpu', replicas: 2, engine: { contextSize: 8192, slots: 4, threads: 1 }, ...extra }));
  return path;
}

describe('npm run serve stops gracefully', () => {
  it('on SIGTERM under 8 long streams: each ends complete or with a shutdown error and [DONE]; exit 0; no engine left', async () => {
    const serve = startServeChild([
      '--config',
      writeConfig({ shutdownGraceMs: 1500 }),
      '--port',
      '0',
      '--data-dir',
      mkdtempSync(join(tmpdir(), 'manifold-data-')),
    ]);
    const base = await serve.base();
    const pids = await serve.enginePids(2);
    const streams = await Promise.all(Array.from({ length: 8 }, (_, i) => openStream(base, { max_tokens: 8000, ignore_eos: true, seed: i, temperature: 0.8 })));
    await Promise.all(streams.map((s) => s.firstToken));
    const signalled = Date.now();
    serve.child.kill('SIGTERM');
    await Promise.all(streams.map((s) => s.ended));
    const streamsEnded = Date.now() - signalled;
    const endings = streams.map(ending);
    expect(await serve.exited).toBe(0);
    console.log(
      `SIGTERM with 8 streams (grace 1500 ms): ${endings.filter((e) => e === 'cut').length} cut; streams ended after ${streamsEnded} ms, exit after ${Date.now() - signalled} ms`,
    );
    // 8,000 tokens each cannot all be made in 1.5 s on this machine's 2 engines: the cut path ran.
    expect(endings).toContain('cut');
    expect(serve.err).toMatch(/stopping: 8 requests and 0 chat answers running get 1500 ms to finish/);
    expect(serve.err).toMatch(
      new RegExp(`stopping: ${endings.filter((e) => e === 'complete').length} answers finished, ${endings.filter((e) => e === 'cut').length} cut`),
    );
    for (const pid of pids) expect(processAlive(pid), `engine ${pid}`).toBe(false);
  }, 180_000);

  it('lets 8 short streams finish within the grace (--shutdown-grace), then exits 0 with no engine left', async () => {
    const serve = startServeChild([
      '--config',
      writeConfig({ shutdownGraceMs: 1 }),
      '--shutdown-grace',
      '60000',
      '--port',
      '0',
      '--data-dir',
      mkdtempSync(join(tmpdir(), 'manifold-data-')),
    ]);
    const base = await serve.base();
    const pids = await serve.enginePids(2);
    const streams = await Promise.all(Array.from({ length: 8 }, () => openStream(base, { max_tokens: 40, ignore_eos: true })));
    await Promise.all(streams.map((s) => s.firstToken));
    serve.child.kill('SIGTERM');
    await Promise.all(streams.map((s) => s.ended));
    expect(streams.map(ending)).toEqual(Array.from({ length: 8 }, () => 'complete'));
    expect(await serve.exited).toBe(0);
    expect(serve.err).toMatch(/get 60000 ms to finish/);
    for (const pid of pids) expect(processAlive(pid), `engine ${pid}`).toBe(false);
  }, 180_000);

  it("drains on one Ctrl-C to `npm run serve`'s process group, as a terminal sends it, with no engine hearing it; a second Ctrl-C ends the grace", async () => {
    const serve = startServeChild(
      ['--config', writeConfig({ shutdownGraceMs: 600_000 }), '--port', '0', '--data-dir', mkdtempSync(join(tmpdir(), 'manifold-data-'))],
      {},
      true,
    );
    const base = await serve.base();
    const pids = await serve.enginePids(2);
    // 8 streams: 4 short ones that finish within the grace, 4 that would run for minutes.
    const short = await Promise.all(Array.from({ length: 4 }, () => openStream(base, { max_tokens: 60, ignore_eos: true })));
    const long = await Promise.all(Array.from({ length: 4 }, () => openStream(base, { max_tokens: 8000, ignore_eos: true })));
    await Promise.all([...short, ...long].map((s) => s.firstToken));
    // The terminal's Ctrl-C: SIGINT to every process of the foreground group (npm, sh, tsx, serve, and any child sharing it).
    const group = -serve.child.pid!;
    process.kill(group, 'SIGINT');
    await Promise.all(short.map((s) => s.ended));
    expect(short.map(ending)).toEqual(['complete', 'complete', 'complete', 'complete']);
    const longEvents = long.map((s) => s.events.length);
    await waitFor(() => (long.every((s, i) => s.events.length > longEvents[i]! + 5) ? true : undefined), 'the long streams to go on through the drain', 30_000);
    // A second Ctrl-C, pressed later than the first one's forwarded copies arrive: the grace ends now and the long streams are cut.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    process.kill(group, 'SIGINT');
    await Promise.all(long.map((s) => s.ended));
    expect(long.map(ending)).toEqual(['cut', 'cut', 'cut', 'cut']);
    // npm ends by the signal it was sent once its script has exited (as it does for any script): serve's own words say how it stopped.
    await serve.exited;
    expect(serve.err).toMatch(/SIGINT: stopping gracefully/);
    expect(serve.err).toMatch(/SIGINT again: ending the grace period now/);
    expect(serve.err).toMatch(/stopping: 4 answers finished, 4 cut/);
    expect(serve.err).toMatch(/\[tokenizer \d+\] exited: stopped/);
    expect(serve.err).not.toMatch(/crash|restart|second interrupt/i);
    for (const pid of pids) expect(processAlive(pid), `engine ${pid}`).toBe(false);
  }, 240_000);

  it('names a taken port and exits 1 before starting any engine', async () => {
    const holder = await startServed({ replicas: 1 });
    const port = new URL(holder.front.url).port;
    const serve = startServeChild(['--port', port]);
    expect(await serve.exited).toBe(1);
    expect(serve.err).toContain(`port ${port} on 127.0.0.1 is taken (another Manifold or llama-server?); use --port N or --port 0`);
    expect(serve.err).not.toMatch(/\[replica \d+ \d+\]/);
  }, 120_000);
});

describe('the drain, in process', () => {
  it('refuses new requests with 503 and Retry-After, and ends as soon as the last stream does', async () => {
    // Answers of up to 8,000 tokens: far longer than the few milliseconds the checks during the drain take.
    const served = await startServed({ engine: { contextSize: 8192, slots: 2, threads: 1 } });
    const stream = await openStream(served.front.url, { max_tokens: 8000, ignore_eos: true });
    await stream.firstToken;
    const stopping = served.stop(600_000);
    for (const path of ['/v1/chat/completions', '/health']) {
      const refused = await fetch(`${served.front.url}${path}`, { method: path === '/health' ? 'GET' : 'POST', body: path === '/health' ? null : '{}' });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('600');
      expect(await refused.json()).toEqual({ error: { message: 'the server is shutting down', type: 'server_error', param: null, code: 'server_shutdown' } });
    }
    await stream.cancel();
    expect(await stopping).toMatchObject({ graceMs: 600_000, http: { finished: 1, cut: 0 }, chat: { finished: 0, cut: 0 } });
  });

  it('answers a JSON request still open at the end of the grace with 503, and saves a chat answer as interrupted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'manifold-data-'));
    const served = await startServed({ engine: { contextSize: 8192, slots: 2, threads: 1 } }, { dataDir });
    const json = fetch(`${served.front.url}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ prompt: 'the model', max_tokens: 8000, ignore_eos: true }),
    });
    const control = await openControl(served.front);
    const conversation = (await control.call('createConversation', { systemPrompt: 'Be brief.' })).value as Conversation;
    await control.call('updateConversation', { id: conversation.id, sampling: { maxTokens: 8000, temperature: 0 } });
    const answering = control.call('sendMessage', { id: conversation.id, content: LONG_ANSWER_PROMPT });
    await waitFor(() => control.events('chat').length >= 20 || undefined, 'the chat answer to stream');
    await waitFor(() => served.front.openGenerations === 1 || undefined, 'the JSON request to be generating');

    const report = await served.stop(0);
    expect(report).toMatchObject({ http: { finished: 0, cut: 1 }, chat: { finished: 0, cut: 1 } });
    const refused = await json;
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('server_shutdown');

    // The stop saved the answer before it closed anything (the control socket may close before its reply).
    void answering.catch(() => {});
    const onDisk = JSON.parse(readFileSync(join(dataDir, 'conversations', `${conversation.id}.json`), 'utf8')) as Conversation;
    const answer = onDisk.messages.at(-1)!;
    expect(answer).toMatchObject({ role: 'assistant', state: 'interrupted', stopped: false, error: null, writer: null });
    const streamed = control
      .events('chat')
      .map((p) => (p as { text: string }).text)
      .join('');
    expect(answer.content.length).toBeGreaterThan(0);
    expect(streamed.startsWith(answer.content) || answer.content.startsWith(streamed)).toBe(true);
    control.close();
  });
});
