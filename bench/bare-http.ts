/**
 * A completion stream read with node:http and nothing else: the time to its first token event, for the
 * `overhead` benchmark's TTFT, where the official client's own work (its SSE decoder, its promises) would
 * otherwise count as the server's. One kept-alive connection per server, as a client with an SDK keeps.
 */
import http from 'node:http';

const agents = new Map<string, http.Agent>();

/** Whether an SSE event is a text completion's token: a choice with text, not yet finished. */
function isTokenEvent(event: string): boolean {
  if (!event.startsWith('data: {')) return false;
  const choice = (JSON.parse(event.slice('data: '.length)) as { choices?: { text?: unknown; finish_reason?: unknown }[] }).choices?.[0];
  return choice !== undefined && typeof choice.text === 'string' && choice.finish_reason === null;
}

/** Streams a greedy completion of `prompt` (token ids) from `baseURL` (ending in /v1) and gives its TTFT in ms. */
export function bareFirstTokenMs(baseURL: string, model: string, prompt: readonly number[], answerTokens: number): Promise<number> {
  const url = new URL(`${baseURL}/completions`);
  let agent = agents.get(url.host);
  if (!agent) agents.set(url.host, (agent = new http.Agent({ keepAlive: true, maxSockets: 1 })));
  const body = JSON.stringify({ model, prompt, max_tokens: answerTokens, temperature: 0, stream: true, ignore_eos: true });
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstAt = 0;
    const request = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer bench' } },
      (response) => {
        // What has come since the last whole event: each event is read once, as it completes.
        let buffered = '';
        /** The answer's start, for the error when no token came. */
        let head = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (firstAt) return;
          if (head.length < 200) head += chunk.slice(0, 200 - head.length);
          buffered += chunk;
          for (let end = buffered.indexOf('\n\n'); end >= 0 && !firstAt; end = buffered.indexOf('\n\n')) {
            if (isTokenEvent(buffered.slice(0, end))) firstAt = performance.now();
            buffered = buffered.slice(end + 2);
          }
        });
        response.on('end', () => (firstAt ? resolve(firstAt - started) : reject(new Error(`${url.href}: no token event (HTTP ${response.statusCode}): ${head}`))));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
