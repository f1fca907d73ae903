/**
 * A completion stream read with node:http and nothing else: the time to its first token event, for the
 * `overhead` benchmark's TTFT, where the official client's own work (its SSE decoder, its promises) would
 * otherwise count as the server's, and the server's own time to that token from its last event, read
 * after the first token was timed. One kept-alive connection per server, as a client with an SDK keeps.
 */
import http from 'node:http';

const agents = new Map<string, http.Agent>();

/** What one SSE event of a text completion stream says: a token (a choice with text, not yet finished), the server's own TTFT, or neither. */
function readEvent(event: string): { token: boolean; serverTtftMs?: number } {
  if (!event.startsWith('data: {')) return { token: false };
  const chunk = JSON.parse(event.slice('data: '.length)) as {
    choices?: { text?: unknown; finish_reason?: unknown }[];
    manifold?: { timings?: { queued_ms?: unknown; prompt_ms?: unknown } };
  };
  const choice = chunk.choices?.[0];
  const timings = chunk.manifold?.timings;
  const serverTtftMs = typeof timings?.prompt_ms === 'number' ? (typeof timings.queued_ms === 'number' ? timings.queued_ms : 0) + timings.prompt_ms : undefined;
  return {
    token: choice !== undefined && typeof choice.text === 'string' && choice.finish_reason === null,
    ...(serverTtftMs !== undefined ? { serverTtftMs } : {}),
  };
}

export interface BareFirstToken {
  ttftMs: number;
  /** The server's own time to its first token (its queue wait and prefill), when it reports one (Manifold's `manifold.timings`). */
  serverTtftMs?: number;
}

/** Streams a greedy completion of `prompt` (token ids) from `baseURL` (ending in /v1): its TTFT, and the server's own when it reports one. */
export function bareFirstToken(baseURL: string, model: string, prompt: readonly number[], answerTokens: number): Promise<BareFirstToken> {
  const url = new URL(`${baseURL}/completions`);
  let agent = agents.get(url.host);
  if (!agent) agents.set(url.host, (agent = new http.Agent({ keepAlive: true, maxSockets: 1 })));
  const body = JSON.stringify({ model, prompt, max_tokens: answerTokens, temperature: 0, stream: true, ignore_eos: true });
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstAt = 0;
    let serverTtftMs: number | undefined;
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer bench' },
      },
      (response) => {
        // What has come since the last whole event: each event is read once, as it completes.
        let buffered = '';
        /** The answer's start, for the error when no token came. */
        let head = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (head.length < 200) head += chunk.slice(0, 200 - head.length);
          buffered += chunk;
          for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
            const event = readEvent(buffered.slice(0, end));
            if (event.token && !firstAt) firstAt = performance.now();
            serverTtftMs = event.serverTtftMs ?? serverTtftMs;
            buffered = buffered.slice(end + 2);
          }
        });
        response.on('end', () =>
          firstAt
            ? resolve({ ttftMs: firstAt - started, ...(serverTtftMs !== undefined ? { serverTtftMs } : {}) })
            : reject(new Error(`${url.href}: no token event (HTTP ${response.statusCode}): ${head}`)),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
