/**
 * One front over local and remote replicas of one model: 2 local CPU engines, a real llama-server (behind
 * a TCP proxy that can stall the link) and a real Manifold node. Conversations return to the replica that
 * holds them, each kind reporting its cached tokens; a stalled link and a killed llama-server lose no
 * request before its first token; the remote comes back when its link or process does; a peer serving
 * another model is refused, saying which model it serves; a front of llama-server children takes its
 * embeddings from a Manifold peer, and from its own embedding engine once the peer is gone.
 */
import { describe, expect, it } from 'vitest';
import { startLlamaServerNode, type LlamaServerNode } from '../../bench/llama-server-node.js';
import { ensureTestModel } from '../../build/test-model.js';
import { promptTokens, testModelPath, waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

type Served = Awaited<ReturnType<typeof startServed>>;

interface Turn {
  replica: number;
  failedOver: number[];
  promptTokens: number;
  cachedTokens: number;
  tokens: number[];
}

/** One completion of token ids through the front's OpenAI endpoint, as a client sends it. */
async function complete(front: Served, prompt: number[], maxTokens = 8): Promise<Turn> {
  const response = await fetch(`${front.front.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, max_tokens: maxTokens, ignore_eos: true, temperature: 0, return_tokens: true }),
  });
  const body = (await response.json()) as {
    error?: { message: string };
    usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
    manifold: { replica: number; failed_over: number[]; tokens: number[] };
  };
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${body.error?.message}`);
  return {
    replica: body.manifold.replica,
    failedOver: body.manifold.failed_over,
    promptTokens: body.usage.prompt_tokens,
    cachedTokens: body.usage.prompt_tokens_details.cached_tokens,
    tokens: body.manifold.tokens,
  };
}

const TIMEOUTS = { connectMs: 1000, firstTokenMs: 4000, idleMs: 4000 };
const LLAMA = 2;
const NODE = 3;

describe('one front over local and remote replicas', () => {
  it('routes turns home on every kind, survives a stalled link and a killed llama-server before the first token, and takes the remote back', async () => {
    const model = testModelPath();
    let llama: LlamaServerNode = await startLlamaServerNode({ model, slots: 2, contextSize: 2048, threads: 1 });
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: llama.port });
    const node = await startServed({ replicas: 1, engine: { contextSize: 2048, slots: 2, threads: 1 } });
    const front = await startServed({
      replicas: [
        { gpus: [] },
        { gpus: [] },
        { url: proxy.url, kind: 'llama-server', slots: 2, timeouts: TIMEOUTS },
        { url: node.front.url, kind: 'manifold', slots: 2, timeouts: TIMEOUTS },
      ],
      engine: { contextSize: 2048, slots: 2, threads: 1 },
      heal: { cooldownMs: 500 },
    });
    const states = (): string[] => front.workstation.replicas.replicaView().map((r) => r.state);
    try {
      await waitFor(() => (states().every((s) => s === 'ready') ? true : undefined), 'all four replicas ready', 60_000);
      const view = front.workstation.replicas.replicaView();
      expect(view[LLAMA]!.remote).toMatchObject({ kind: 'llama-server', url: proxy.url });
      expect(view[NODE]!.remote).toMatchObject({ kind: 'manifold', url: node.front.url });

      // Eight conversations at once spread over the four replicas (two slots each); each second turn goes home
      // (1,000-token histories: what a replica holds outweighs any difference in prefill speed between kinds).
      const firsts = await Promise.all(
        Array.from({ length: 8 }, (_, i) => promptTokens(1000, i * 37)).map(async (prompt) => ({ prompt, turn: await complete(front, prompt) })),
      );
      expect(new Set(firsts.map((f) => f.turn.replica))).toEqual(new Set([0, 1, LLAMA, NODE]));
      const seconds = await Promise.all(firsts.map((f) => complete(front, [...f.prompt, ...f.turn.tokens, ...promptTokens(40, 7)])));
      for (const [i, second] of seconds.entries()) {
        const first = firsts[i]!.turn;
        expect(second.replica, `conversation ${i}`).toBe(first.replica);
        // Each kind reports what its cache held: at least the first turn's prompt.
        expect(second.cachedTokens, `conversation ${i} on replica ${second.replica}`).toBeGreaterThanOrEqual(first.promptTokens);
      }

      // The link to llama-server stalls: what was bound to it fails over before its first token.
      proxy.setMode('stall');
      const stalled = await Promise.all(Array.from({ length: 8 }, (_, i) => complete(front, promptTokens(200, 1000 + i * 11))));
      expect(stalled.every((t) => t.tokens.length === 8)).toBe(true);
      expect(stalled.some((t) => t.failedOver.includes(LLAMA))).toBe(true);
      await waitFor(() => (states()[LLAMA] !== 'ready' ? true : undefined), 'the stalled remote to leave routing', 20_000);
      proxy.setMode('pass');
      await waitFor(() => (states()[LLAMA] === 'ready' ? true : undefined), 'the remote back after its link', 60_000);

      // The llama-server process is killed: nothing is lost, and it comes back when the process does.
      llama.kill();
      const meanwhile = await Promise.all(Array.from({ length: 6 }, (_, i) => complete(front, promptTokens(200, 2000 + i * 13))));
      expect(meanwhile.every((t) => t.tokens.length === 8 && t.replica !== LLAMA)).toBe(true);
      await waitFor(() => (states()[LLAMA] !== 'ready' ? true : undefined), 'the dead remote to leave routing', 20_000);
      llama = await startLlamaServerNode({ model, slots: 2, contextSize: 2048, threads: 1, port: llama.port });
      await waitFor(() => (states()[LLAMA] === 'ready' ? true : undefined), 'the remote back after its process', 60_000);
      const after = await Promise.all(Array.from({ length: 8 }, (_, i) => complete(front, promptTokens(120, 3000 + i * 17))));
      expect(after.some((t) => t.replica === LLAMA)).toBe(true);
    } finally {
      await front.close();
      await proxy.close();
      await llama.stop();
    }
  }, 600_000);

  it('refuses a remote that serves another model, saying which model it serves, while the local replicas serve', async () => {
    const other = await startServed({ model: await ensureTestModel('small'), replicas: 1, engine: { contextSize: 1024, slots: 1, threads: 1 } });
    const front = await startServed({
      replicas: [{ gpus: [] }, { url: other.front.url, kind: 'manifold', timeouts: TIMEOUTS }],
      engine: { contextSize: 1024, slots: 2, threads: 1 },
    });
    const refusal = await waitFor(() => front.logs.find((line) => line.includes('serves "manifold-test-small')), 'the refusal in the log', 60_000);
    expect(refusal).toContain(other.front.url);
    expect(front.workstation.replicas.replicaView()[1]!.state).not.toBe('ready');
    const served = await complete(front, promptTokens(80));
    expect(served.replica).toBe(0);
  }, 300_000);

  it('takes embeddings from a Manifold peer ahead of its own embedding engine (llama-server children serve none), and from the engine once the peer is gone', async () => {
    const peer = await startServed({ replicas: 1, engine: { contextSize: 1024, slots: 1, threads: 1 } });
    const front = await startServed({
      replicas: [{ gpus: [] }, { url: peer.front.url, kind: 'manifold', timeouts: TIMEOUTS }],
      engine: { kind: 'llama-server', contextSize: 1024, slots: 2, threads: 1 },
    });
    await waitFor(() => (front.workstation.replicas.replicaView()[1]!.state === 'ready' ? true : undefined), 'the peer to be ready', 60_000);
    const embed = async (at: Served): Promise<number[]> => {
      const response = await fetch(`${at.front.url}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'the same words' }),
      });
      const body = (await response.json()) as { data: { embedding: number[] }[]; error?: { message: string } };
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${body.error?.message}`);
      return body.data[0]!.embedding;
    };
    const fromPeer = await embed(front);
    expect(fromPeer).toEqual(await embed(peer));
    const engineStarted = (): boolean => front.logs.some((line) => line.includes('[embeddings] serving embeddings'));
    expect(engineStarted()).toBe(false);
    await peer.close();
    await waitFor(() => (front.workstation.replicas.replicaView()[1]!.state !== 'ready' ? true : undefined), 'the front to see the peer gone', 60_000);
    const fromEngine = await embed(front);
    expect(engineStarted()).toBe(true);
    expect(fromEngine.map((v) => v.toFixed(4))).toEqual(fromPeer.map((v) => v.toFixed(4)));
  }, 300_000);
});
