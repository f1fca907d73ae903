/**
 * Remote replicas against real peers on loopback: a Manifold node (`serve`, one replica of the tiny
 * model) and llama.cpp's llama-server, each driven by a RemoteLink and its RemoteClient as the replica
 * set drives a local engine; a peer of another model refused; and the link broken by a TCP proxy
 * (stalled, dropped) with every request ending within its bounds and the link coming back.
 */
import { basename } from 'node:path';
import { EventEmitter, once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestModel } from '../../build/test-model.js';
import { readyInfoSchema, slotViewSchema, type GenerateDone, type GenerateRequestInput } from '../../common/engine-protocol.js';
import { readModelFileHeader } from '../../common/node/gguf-file.js';
import { EngineRequestError, type GenerationHandle, type TokenChunk } from '../../core/engine/engine-client.js';
import type { ExitReason } from '../../core/supervisor/child-life.js';
import type { ReplicaDriver } from '../../core/kind/replica-driver.js';
import { expectedModelFrom, type ExpectedModel } from '../../core/remote/model-match.js';
import { llamaServerDialect } from '../../core/remote/llama-server-dialect.js';
import { RemoteClient } from '../../core/remote/remote-client.js';
import { RemoteLostError } from '../../core/remote/remote-errors.js';
import { RemoteLink } from '../../core/remote/remote-link.js';
import { DEFAULT_REMOTE_TIMEOUTS, type RemotePlan } from '../../core/config/remote-plan.js';
import { promptTokens, testModelPath, waitFor } from '../helpers/engines.js';
import { startLlamaServerNode, type LlamaServerNode } from '../../bench/llama-server-node.js';
import { startServed } from '../helpers/served.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/** The model as the local file tells it: what every replica must serve. */
async function expectedModelOf(path: string): Promise<ExpectedModel> {
  return expectedModelFrom(path, await readModelFileHeader(path));
}

const links: RemoteLink[] = [];
const peers: LlamaServerNode[] = [];
afterAll(async () => {
  for (const link of links) {
    await link.stop();
    await link.close();
  }
  await Promise.all(peers.map((peer) => peer.stop()));
});

/** A llama-server of the tiny model (or `model`) with `slots` slots of 1024 tokens, stopped after the file. */
async function startLlamaServer(slots: number, model = testModelPath()): Promise<LlamaServerNode> {
  const peer = await startLlamaServerNode({ model, slots, contextSize: 1024, threads: 1 });
  peers.push(peer);
  return peer;
}

function newLink(url: string, expected: ExpectedModel, plan: Partial<RemotePlan> = {}, healthIntervalMs = 2000): { link: RemoteLink; logs: string[] } {
  const logs: string[] = [];
  const link = new RemoteLink({
    replica: 7,
    plan: { url, kind: 'auto', apiKey: null, slots: null, model: null, timeouts: DEFAULT_REMOTE_TIMEOUTS, ...plan },
    expected: () => expected,
    log: (line) => logs.push(line),
    healthIntervalMs,
  });
  links.push(link);
  return { link, logs };
}

/** The next `event` of `emitter`, failing after `timeoutMs`. */
async function next<T extends unknown[]>(emitter: EventEmitter, event: string, timeoutMs: number): Promise<T> {
  return (await once(emitter, event, { signal: AbortSignal.timeout(timeoutMs) })) as T;
}

/** Runs a generation, collecting its chunks; `onChunk` sees each with the handle (to cancel, or to break the link). */
async function generation(
  client: RemoteClient,
  request: GenerateRequestInput,
  onChunk: (chunk: TokenChunk, index: number, handle: GenerationHandle) => void = () => {},
): Promise<{ chunks: TokenChunk[]; done: GenerateDone; handle: GenerationHandle }> {
  const chunks: TokenChunk[] = [];
  // The callback runs only once the stream flows, after `handle` is assigned.
  const handle: GenerationHandle = client.generate(request, (chunk) => {
    chunks.push(chunk);
    onChunk(chunk, chunks.length - 1, handle);
  });
  return { chunks, done: await handle.done, handle };
}

let tiny: ExpectedModel;
beforeAll(async () => {
  tiny = await expectedModelOf(testModelPath());
});

describe.each([
  {
    peer: 'a Manifold node',
    kind: 'manifold',
    start: async () => (await startServed({ replicas: 1 })).front.url,
  },
  {
    peer: 'llama-server',
    kind: 'llama-server',
    start: async () => (await startLlamaServer(2)).url,
  },
])('$peer as a remote replica', ({ kind, start }) => {
  let link: RemoteLink;
  let client: RemoteClient;

  beforeAll(async () => {
    link = newLink(await start(), tiny).link;
  });

  it(`is detected as ${kind}, checked to serve the same model, and becomes ready`, async () => {
    const ready = next<[unknown]>(link, 'ready', 30_000);
    const info = await link.start();
    expect((await ready)[0]).toEqual(info);
    // A RemoteLink is what the replica set drives (checked by the compiler here).
    const driver: ReplicaDriver = link;
    expect(driver.state).toBe('ready');
    expect(driver.pid).toBeUndefined();
    expect(link.kind).toBe(kind);
    expect(link.latencyMs).toBeGreaterThan(0);
    expect(readyInfoSchema.parse(info)).toEqual(info);
    expect(info).toMatchObject({ backend: `remote:${kind}`, sizes: { slots: 2, contextSize: 1024 }, modelLoads: 0 });
    if (kind === 'llama-server') expect(info.model).toMatchObject({ vocabSize: tiny.vocabSize, parameters: tiny.parameters, trainContextSize: 4096 });
    if (kind === 'manifold') expect(info.model).toMatchObject({ name: tiny.id, architecture: 'llama' });
    client = link.client!;
  });

  it('streams a generation of token ids with their ids back, and a second turn reuses the cached prefix', async () => {
    const prompt = [1, ...promptTokens(63)];
    const first = await generation(client, { tokens: prompt, maxTokens: 8, sampling: { temperature: 0 } });
    // Tokens that reach the peer's front together travel as one chunk: counted by token, not by chunk.
    expect(first.chunks.flatMap((c) => c.tokens)).toHaveLength(8);
    for (const chunk of first.chunks) expect(chunk.tokens.length).toBeGreaterThanOrEqual(1);
    expect(first.done).toMatchObject({ finishReason: 'length', usage: { promptTokens: 64, completionTokens: 8 }, heldTokens: 72 });
    expect(first.done.completionTokens).toEqual(first.chunks.flatMap((c) => c.tokens));
    expect(first.done.text).toBe(first.chunks.map((c) => c.text).join(''));
    expect(first.done.slot).not.toBeNull();
    expect(await first.handle.started).toEqual({ slot: first.done.slot, reusedTokens: first.done.reusedTokens, queuedMs: 0 });

    const turn = [...prompt, ...first.done.completionTokens, ...promptTokens(8, 3)];
    const second = await generation(client, { tokens: turn, maxTokens: 4, sampling: { temperature: 0 } });
    expect(second.done.reusedTokens).toBeGreaterThanOrEqual(64);
    expect(second.done.slot).toBe(first.done.slot);
    expect(second.done.timings.prefillTokens).toBeLessThan(turn.length - 60);
  });

  it("serves embeddings through a Manifold node's /v1/embeddings (the vectors it gives directly); a llama-server peer is not asked", async () => {
    if (kind === 'llama-server') {
      expect(client.embed).toBeUndefined();
      return;
    }
    const inputs = [
      [1, ...promptTokens(12)],
      [1, ...promptTokens(5, 7)],
    ];
    const vectors = await client.embed!(inputs);
    const direct = (await (
      await fetch(`${link.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: inputs }) })
    ).json()) as { data: { embedding: number[] }[] };
    expect(vectors).toHaveLength(2);
    expect(vectors[0]!.length).toBeGreaterThan(0);
    expect(vectors).toEqual(direct.data.map((d) => d.embedding));
    expect(vectors[0]).not.toEqual(vectors[1]);
  });

  it('reads a long, fast stream a frame apart without losing a token: as many ids come as the peer says it made', async () => {
    // Hundreds of tokens a second on the tiny model: after its first events, core reads the stream a frame apart.
    const long = await generation(client, { tokens: [1, ...promptTokens(31, 5)], maxTokens: 300, ignoreEos: true, sampling: { temperature: 0 } });
    expect(long.done.finishReason).toBe('length');
    // The peer's own count (llama-server's tokens_predicted, a Manifold node's usage) against the ids that came.
    expect(long.done.usage.completionTokens).toBe(300);
    expect(long.chunks.flatMap((c) => c.tokens)).toHaveLength(300);
    expect(long.done.text).toBe(long.chunks.map((c) => c.text).join(''));
  });

  it("lists the peer's slots with what they hold", async () => {
    const slots = await client.slots();
    expect(slots).toHaveLength(2);
    for (const slot of slots) expect(slotViewSchema.parse(slot)).toEqual(slot);
    expect(Math.max(...slots.map((s) => s.heldTokens))).toBeGreaterThan(64);
  });

  it('cancels mid-stream: the peer stops, and done resolves as cancelled with what had come', async () => {
    let found: Promise<boolean> | undefined;
    const cancelled = await generation(client, { tokens: [1, ...promptTokens(15, 9)], maxTokens: 900, ignoreEos: true }, (_chunk, index, handle) => {
      if (index === 2) found = handle.cancel();
    });
    expect(await found).toBe(true);
    expect(cancelled.done.finishReason).toBe('cancelled');
    expect(cancelled.chunks.length).toBeGreaterThanOrEqual(3);
    expect(cancelled.chunks.length).toBeLessThan(900);
    expect(await cancelled.handle.cancel()).toBe(false);
    await waitFor(async () => ((await client.slots()).every((s) => s.state === 'idle') ? true : undefined), 'the peer to stop generating', 15_000);
  });

  it("refuses a prompt longer than the peer's context as prompt_too_long, in the peer's words", async () => {
    const refused = client.generate({ tokens: [1, ...promptTokens(1100)], maxTokens: 4 }).done;
    await expect(refused).rejects.toBeInstanceOf(EngineRequestError);
    await expect(refused).rejects.toMatchObject({ code: 'prompt_too_long', message: expect.stringContaining(link.url) });
  });

  it('stops: exit {stopped}, no client', async () => {
    const exit = next<[ExitReason]>(link, 'exit', 5000);
    await link.stop();
    expect((await exit)[0]).toEqual({ kind: 'stopped' });
    expect(link.state).toBe('exited');
    expect(link.client).toBeUndefined();
  });
});

describe('a peer serving another model', () => {
  it('is refused with a message naming the model it serves, as load_failed, and not reconnected', async () => {
    const small = await startLlamaServer(1, await ensureTestModel('small'));
    const { link } = newLink(small.url, tiny);
    const exit = next<[ExitReason]>(link, 'exit', 30_000);
    const message = `${small.url}: serves "${basename(await ensureTestModel('small'), '.gguf')}", not "${tiny.id}"; point this replica at a server of the same model`;
    await expect(link.start()).rejects.toThrow(message);
    expect((await exit)[0]).toEqual({ kind: 'load_failed', message: expect.stringContaining(message) });
    expect(link.state).toBe('exited');
    expect(link.reconnecting).toBe(false);
    await small.stop();
  });
});

describe('a remote replica behind a faulty link', () => {
  const timeouts = { connectMs: 1000, firstTokenMs: 1500, idleMs: 1500 };
  /** Generous room over a bound for a noisy machine; far below the defaults (120 s, 60 s) a hang would hit. */
  const SLACK_MS = 2500;
  let proxy: TcpProxy;
  let link: RemoteLink;

  beforeAll(async () => {
    const peer = await startLlamaServer(2);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: peer.port });
    link = newLink(proxy.url, tiny, { timeouts }, 200).link;
    await link.start();
  });
  afterAll(async () => {
    await proxy.close();
  });

  /** Lets the link pass again and waits for the reconnect (back-off from 1 s). */
  async function linkComesBack(): Promise<void> {
    const ready = next(link, 'ready', 40_000);
    proxy.setMode('pass');
    await ready;
    expect(link.state).toBe('ready');
    const after = await generation(link.client!, { tokens: [1, ...promptTokens(8)], maxTokens: 2 });
    expect(after.done.completionTokens).toHaveLength(2);
  }

  it('a stall before the first token fails the request within its bounds, takes the replica out, and it returns with the link', async () => {
    const exit = next<[ExitReason]>(link, 'exit', 10_000);
    proxy.setMode('stall');
    const sentAt = performance.now();
    const viaLink = link.client!.generate({ tokens: [1, ...promptTokens(16)], maxTokens: 4 }).done;
    // The same stall seen by a client whose first-token bound is the shorter one.
    const strictFirstToken = new RemoteClient({
      peer: { url: proxy.url, apiKey: null },
      dialect: llamaServerDialect,
      model: null,
      contextSize: 1024,
      timeouts: { ...timeouts, connectMs: 5000 },
    });
    const viaStrict = strictFirstToken.generate({ tokens: [1, ...promptTokens(16)], maxTokens: 4 }).done;

    await expect(viaLink).rejects.toBeInstanceOf(RemoteLostError);
    await expect(viaLink).rejects.toThrow(new RegExp(`^${proxy.url}: (stopped answering|no first token within 1500 ms \\(timeouts.firstTokenMs\\))`));
    await expect(viaStrict).rejects.toThrow(`${proxy.url}: no first token within 1500 ms (timeouts.firstTokenMs)`);
    expect(performance.now() - sentAt).toBeLessThan(timeouts.firstTokenMs + SLACK_MS);

    expect((await exit)[0]).toEqual({ kind: 'unreachable', message: expect.stringContaining(proxy.url) });
    expect(link.state).toBe('exited');
    expect(link.client).toBeUndefined();
    expect(link.reconnecting).toBe(true);
    await linkComesBack();
  });

  it('a stall after the first tokens ends the stream with a clear error after the idle bound', async () => {
    proxy.setMode('slow', 20);
    let stalledAt = 0;
    const stream = generation(link.client!, { tokens: [1, ...promptTokens(16, 4)], maxTokens: 600, ignoreEos: true }, (_chunk, index) => {
      if (index !== 2) return;
      proxy.setMode('stall');
      stalledAt = performance.now();
    });
    await expect(stream).rejects.toThrow(`${proxy.url}: the stream was silent for 1500 ms after its first tokens (timeouts.idleMs)`);
    expect(performance.now() - stalledAt).toBeLessThan(timeouts.idleMs + SLACK_MS);
    await waitFor(() => (link.state === 'exited' ? true : undefined), 'the link to go unreachable', 10_000);
    await linkComesBack();
  });

  it('a link dropped mid-stream ends the stream with a clear error after its tokens, and nothing waits for a bound', async () => {
    proxy.setMode('slow', 20);
    let seen = 0;
    let droppedAt = 0;
    const stream = generation(link.client!, { tokens: [1, ...promptTokens(16, 6)], maxTokens: 600, ignoreEos: true }, (_chunk, index) => {
      seen = index + 1;
      if (index !== 2) return;
      proxy.setMode('drop');
      droppedAt = performance.now();
    });
    const lost = await stream.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(lost).toBeInstanceOf(RemoteLostError);
    expect((lost as Error).message).toMatch(new RegExp(`^${proxy.url}: the stream broke after its first tokens: `));
    expect(seen).toBeGreaterThanOrEqual(3);
    expect(performance.now() - droppedAt).toBeLessThan(SLACK_MS);
    await waitFor(() => (link.state === 'exited' ? true : undefined), 'the link to go unreachable', 10_000);
    await linkComesBack();
  });
});
