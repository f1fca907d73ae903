/**
 * Every bad input is a 4xx in words: 1,000 seeded hostile bodies (test/helpers/request-fuzz.ts) to
 * /v1/chat/completions and /v1/completions of a served workstation, four at a time, plus the requests
 * that used to reach the engine boundary and come back as a 500 with zod's issue list. No answer may be
 * a 5xx, and every 4xx is an OpenAI error whose message is words, not JSON.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { fuzzBody, seededRandom, type FuzzBody } from '../helpers/request-fuzz.js';
import { startServed } from '../helpers/served.js';

type Served = Awaited<ReturnType<typeof startServed>>;
let served: Served;

beforeAll(async () => {
  served = await startServed();
});

interface Answer {
  status: number;
  /** The error message of a 4xx/5xx; null for a 2xx. */
  message: string | null;
  /** The first SSE event after the chat's role chunk, of a streamed 2xx (read, then the stream is dropped). */
  firstEvent: string | null;
}

const ROLE_CHUNK = /"delta":\{"role":"assistant"\}/;

/** Sends one body; a stream is read to its first token's event and then dropped (which cancels its generation). */
async function send({ path, text }: FuzzBody): Promise<Answer> {
  const response = await fetch(`${served.front.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  if (response.ok && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const reader = response.body!.getReader();
    let buffered = '';
    const firstEvent = (): string | undefined =>
      buffered
        .split('\n\n')
        .slice(0, -1)
        .find((event) => !ROLE_CHUNK.test(event));
    while (firstEvent() === undefined) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += new TextDecoder().decode(value);
    }
    await reader.cancel();
    return { status: response.status, message: null, firstEvent: firstEvent() ?? null };
  }
  const body = await response.text();
  if (response.ok) return { status: response.status, message: null, firstEvent: null };
  const parsed = JSON.parse(body) as { error: { message: unknown; type: unknown } };
  expect(typeof parsed.error.type, body).toBe('string');
  expect(typeof parsed.error.message, body).toBe('string');
  return { status: response.status, message: parsed.error.message as string, firstEvent: null };
}

/** A message a person can read: not a JSON value, not zod's issue list, not a stack trace. */
function expectWords(message: string, context: string): void {
  expect(message, context).not.toMatch(/^\s*[[{]|"code"\s*:|"path"\s*:|"expected"\s*:|\n\s+at /);
  expect(message.length, context).toBeLessThan(400);
}

const json = (path: FuzzBody['path'], body: unknown): FuzzBody => ({ path, text: JSON.stringify(body) });
const chat = { messages: [{ role: 'user', content: 'hi' }] };

describe('hostile request bodies', () => {
  it('answers 1,000 seeded bodies with no 5xx, every refusal in words', async () => {
    const random = seededRandom(20_240_614);
    const bodies = Array.from({ length: 1000 }, () => fuzzBody(random));
    const statuses = new Map<number, number>();
    let next = 0;
    const started = Date.now();
    const worker = async (): Promise<void> => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const context = `${body.path} ${body.text.slice(0, 160)}`;
        const answer = await send(body);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        expect(answer.status, `${context} → ${answer.message}`).toBeLessThan(500);
        if (answer.message !== null) expectWords(answer.message, context);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    console.log(`fuzz: ${bodies.length} bodies in ${Date.now() - started} ms; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    expect(statuses.get(400)).toBeGreaterThan(300);
    expect(statuses.get(200)).toBeGreaterThan(50);
    // Nothing reached the engine boundary unchecked, and nothing failed inside.
    expect(served.logs.filter((line) => /internal error|passed the request schema/.test(line))).toEqual([]);
  }, 180_000);

  it('clamps token budgets over the engine’s limit instead of failing', async () => {
    for (const body of [
      json('/v1/chat/completions', { ...chat, max_tokens: 2_000_000, stream: true }),
      json('/v1/chat/completions', { ...chat, max_completion_tokens: 2_000_000, stream: true }),
      json('/v1/completions', { prompt: 'the model', max_tokens: 1_048_577, stream: true }),
    ]) {
      const answer = await send(body);
      expect(answer.status, body.text).toBe(200);
      expect(answer.firstEvent).toMatch(/^data: \{.*"choices":\[\{/);
    }
  });

  it('names the field and the limit for a stop string, the stop count, and other limits', async () => {
    const refused = async (body: FuzzBody): Promise<string> => {
      const answer = await send(body);
      expect(answer.status, body.text).toBe(400);
      return answer.message!;
    };
    expect(await refused(json('/v1/chat/completions', { ...chat, stop: ['x'.repeat(300)] }))).toBe(
      'stop[0]: a stop string is at most 256 characters (got 300)',
    );
    expect(await refused(json('/v1/completions', { prompt: 'a', stop: 'y'.repeat(257) }))).toBe('stop: a stop string is at most 256 characters (got 257)');
    expect(await refused(json('/v1/completions', { prompt: 'a', stop: Array.from({ length: 17 }, (_, i) => `${i}`) }))).toBe(
      'stop: at most 16 stop strings (got 17)',
    );
    expect(await refused(json('/v1/completions', { prompt: { text: 'a' } }))).toMatch(
      /^prompt: expected a string, an array of one string, or an array of token ids/,
    );
    expect(await refused(json('/v1/completions', { prompt: [Number.MAX_SAFE_INTEGER] }))).toContain('outside the model');
    expect(await refused(json('/v1/chat/completions', { ...chat, max_tokens: -5 }))).toBe('max_tokens: at least 1 (got -5)');
    expect(await refused({ path: '/v1/chat/completions', text: '' })).toBe('the request body is empty; send a JSON object');
    expect(await refused({ path: '/v1/chat/completions', text: 'null' })).toBe('the request body: expected an object, got null');
  });

  it('takes every sampling value at the edge of its range', async () => {
    const edge = {
      ...chat,
      max_tokens: 2,
      temperature: 2,
      top_p: 0,
      top_k: Number.MAX_SAFE_INTEGER,
      min_p: 1,
      seed: Number.MAX_SAFE_INTEGER,
      repeat_penalty: 10,
      stop: Array.from({ length: 16 }, () => 'z'.repeat(256)),
    };
    expect((await send(json('/v1/chat/completions', edge))).status).toBe(200);
  });
});
