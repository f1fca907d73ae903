/**
 * A flood through the HTTP front: 30 chat requests with 1 MB prompts at once (under the 1 MiB body limit,
 * no auth), then a normal chat. Tokenizing happens outside the main process, so the main loop keeps
 * answering /health, the watchdog kills no engine, every flood request is refused in words (400: far
 * over the context; or 429), and the normal chat is answered.
 */
import { describe, expect, it } from 'vitest';
import { startServed } from '../helpers/served.js';

const FLOOD = 30;
const PROMPT_BYTES = 1_000_000;

describe('serving under a flood', () => {
  it('refuses 30 × 1 MB prompts with 4xx while /health answers within a second, kills no engine, and answers a normal chat after', async () => {
    const served = await startServed({ engine: { contextSize: 1024, slots: 2, threads: 1 } });
    const url = served.front.url;
    const pids = served.workstation.replicas.replicaView().map((r) => r.pid);
    const huge = 'flood words of a prompt '.repeat(Math.ceil(PROMPT_BYTES / 24)).slice(0, PROMPT_BYTES);
    const body = JSON.stringify({ messages: [{ role: 'user', content: huge }], max_tokens: 4 });

    let flooding = true;
    const healthTimes: number[] = [];
    const probe = (async () => {
      while (flooding) {
        const started = performance.now();
        const health = await fetch(`${url}/health`);
        healthTimes.push(performance.now() - started);
        expect(health.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const floods = await Promise.all(
      Array.from({ length: FLOOD }, async () => {
        const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        return { status: response.status, body: (await response.json()) as { error?: { message: string; code: string | null } } };
      }),
    );
    flooding = false;
    await probe;

    for (const flood of floods) {
      expect([400, 429]).toContain(flood.status);
      expect(flood.body.error?.message).toMatch(/prompt|busy/);
    }
    expect(floods.filter((f) => f.status === 400).every((f) => f.body.error?.code === 'context_length_exceeded')).toBe(true);
    expect(healthTimes.length).toBeGreaterThan(0);
    expect(Math.max(...healthTimes)).toBeLessThan(1000);

    const normal = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hello after the flood' }], max_tokens: 4 }),
    });
    expect(normal.status).toBe(200);
    expect(served.workstation.replicas.replicaView().map((r) => r.pid)).toEqual(pids);
    expect(served.logs.some((line) => line.includes('hung:'))).toBe(false);
    console.log(
      `flood: ${FLOOD} × ${PROMPT_BYTES} bytes refused (${floods.map((f) => f.status).join(',')}); /health slowest ${Math.round(Math.max(...healthTimes))} ms over ${healthTimes.length} probes`,
    );
  }, 300_000);
});
