/**
 * Engine kind `llama-server`: two local replicas, each a supervised llama-server child of the test model
 * (the binary test/global-setup.ts builds), behind the OpenAI front, driven by the `openai` client with
 * SSE. Each child is pinned to its replica's cores; a conversation's second turn goes to the replica
 * that holds its first (cached tokens reported by llama-server), or where that one is busy to the other,
 * which restores the slot file its first replica lent; each child listens on a Unix socket in
 * a folder of its own (no TCP port); a SIGKILLed child loses no request
 * and is healed as a new process that serves again; a rolling live resize restarts both children. A
 * conversation whose only slot another took goes back to the replica whose host-memory prompt cache saved
 * it (core's mirror of that cache), which restores it, and the replica's view shows the entry; a
 * conversation whose replica is busy is restored on the free one from the slot file its replica lent; a RAM
 * budget of 0 in the run config turns that cache off.
 */
import { readdir, readFile, readlink, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { allowedCpus } from '../../core/cpu/cpu-pinning.js';
import { waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';
import { llamaServerOf } from '../helpers/replica-sets.js';

interface Turn {
  replica: number;
  text: string;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
}

/** One streamed chat turn: its text, the replica named on the last chunk (Manifold's extension) and the usage. */
async function chatTurn(client: OpenAI, model: string, messages: OpenAI.Chat.ChatCompletionMessageParam[], maxTokens = 8): Promise<Turn> {
  const stream = await client.chat.completions.create({
    model,
    messages,
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: true,
  } as OpenAI.ChatCompletionCreateParamsStreaming);
  let text = '';
  let replica: number | undefined;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    const served = (chunk as unknown as { manifold?: { replica: number } }).manifold;
    if (served) replica = served.replica;
    if (chunk.usage) usage = chunk.usage;
  }
  if (replica === undefined || !usage) throw new Error('the stream ended without the replica or the usage');
  return {
    replica,
    text,
    promptTokens: usage.prompt_tokens,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    completionTokens: usage.completion_tokens,
  };
}

/** The TCP ports `pid` listens on: the LISTEN rows of /proc/net/tcp whose socket inode is one of its fds. */
async function listeningTcpPorts(table: string, pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  return table
    .split('\n')
    .slice(1)
    .map((row) => row.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A' && inodes.has(cols[9] ?? ''))
    .map((cols) => parseInt(cols[1]!.split(':')[1]!, 16));
}

/** The workstation on llama-server children, an `openai` client of its front, its model's id and its replica set. */
async function serveLlamaServer(config: Parameters<typeof startServed>[0]) {
  const served = await startServed(config);
  const client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  return { served, client, model: served.workstation.modelId, replicas: served.workstation.replicas };
}

/** Whole 64-token blocks of `n` tokens, in tokens (what the index counts). */
const blockFloor = (n: number) => Math.floor(n / 64) * 64;

const opening = (i: number): OpenAI.Chat.ChatCompletionMessageParam[] => [
  { role: 'system', content: `You are assistant number ${i}. ${'Answer briefly and keep to the point of the question. '.repeat(20)}` },
  { role: 'user', content: `Conversation ${i}: tell me about the weather in city ${i * 7}.` },
];

describe('llama-server as the engine kind', () => {
  it("names the conversation each slot holds (llama-server's /slots does not: the router's last request there does), and the model's architecture", async () => {
    const { served, client, model, replicas } = await serveLlamaServer({
      replicas: 1,
      engine: { kind: 'llama-server', contextSize: 1024, slots: 2, threads: 1 },
    });
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 2, user: 'conversation-a' });
    expect((await replicas.slotsView()).map((s) => s.conversationId)).toContain('conversation-a');
    // The architecture, which llama-server's metadata leaves out, from the file's header (as Inspect says it).
    expect(((await (await fetch(`${served.front.url}/health`)).json()) as { model: { architecture: string | null } }).model.architecture).toBe('llama');
    await served.close();
  });

  it('serves chats on 2 pinned llama-server children, returns each second turn home (or to the other, which restores the slot file home lent) with cached tokens, and heals a SIGKILLed child', async () => {
    const { served, client, model, replicas } = await serveLlamaServer({
      replicas: 2,
      engine: { kind: 'llama-server', contextSize: 2048, slots: 2, threads: 1 },
      heal: { cooldownMs: 500 },
    });

    const views = replicas.replicaView();
    expect(views.map((v) => v.state)).toEqual(['ready', 'ready']);
    for (const view of views) {
      expect(replicas.readyInfo(view.replica)).toMatchObject({ backend: 'llama-server', sizes: { slots: 2, contextSize: 2048 } });
      expect(llamaServerOf(replicas, view.replica).pid).toBe(view.pid);
      // It listens on a Unix socket in its own folder, which only this user can enter (no TCP port).
      const folder = dirname(llamaServerOf(replicas, view.replica).slotFolder!);
      expect((await stat(folder)).mode & 0o777).toBe(0o700);
      expect((await stat(join(folder, 'http.sock'))).isSocket()).toBe(true);
      expect(await readFile(`/proc/${view.pid}/net/tcp`, 'utf8').then((table) => listeningTcpPorts(table, view.pid!))).toEqual([]);
      // Its cores, as the engine child's: every thread of the child pinned to the replica's set.
      if (view.cpus.length > 0) {
        for (const tid of await readdir(`/proc/${view.pid}/task`)) expect(await allowedCpus(Number(tid)).catch(() => view.cpus)).toEqual(view.cpus);
      }
    }
    expect(served.logs.some((l) => /^\[replica 1 \d+\] ready: 2 slots × 2048 tokens on llama-server/.test(l))).toBe(true);

    // Four conversations at once fill the four slots; each second turn goes to the replica holding its first,
    // or to the other where the router costs that one cheaper (a restore costs a millisecond or two, so a
    // replica measured faster or less loaded wins), which restores the slot file the first replica lent:
    // either way it starts from its first turn's tokens.
    const histories = [0, 1, 2, 3].map(opening);
    const firsts = await Promise.all(histories.map((messages) => chatTurn(client, model, messages)));
    expect(new Set(firsts.map((t) => t.replica))).toEqual(new Set([0, 1]));
    expect(firsts.every((t) => t.completionTokens === 8 && t.cachedTokens === 0)).toBe(true);
    const seconds = await Promise.all(
      histories.map((messages, i) =>
        chatTurn(client, model, [...messages, { role: 'assistant', content: firsts[i]!.text }, { role: 'user', content: 'And tomorrow?' }]),
      ),
    );
    for (const [i, second] of seconds.entries()) {
      const home = second.replica === firsts[i]!.replica;
      if (!home) console.log(`conversation ${i} moved from replica ${firsts[i]!.replica} to ${second.replica} with ${second.cachedTokens} cached tokens`);
      expect(second.cachedTokens, `conversation ${i} (${home ? 'home' : 'moved'}): llama-server's cache_n`).toBeGreaterThanOrEqual(
        home ? 1 : blockFloor(firsts[i]!.promptTokens),
      );
      expect(second.promptTokens).toBeGreaterThan(firsts[i]!.promptTokens);
    }

    // A SIGKILLed child: nothing is lost meanwhile, and the replica comes back as a new process that serves.
    const victim = 1;
    const oldPid = llamaServerOf(replicas, victim).pid;
    llamaServerOf(replicas, victim).signal('SIGKILL');
    const meanwhile = await Promise.all([10, 11, 12, 13].map((i) => chatTurn(client, model, opening(i), 4)));
    expect(meanwhile.every((t) => t.completionTokens === 4)).toBe(true);
    await waitFor(
      () => served.logs.find((l) => l.includes(`[replica ${victim} ${oldPid}] exited: crashed (code none, signal SIGKILL)`)),
      'the kill in the log',
      20_000,
    );
    await waitFor(
      () => (replicas.replicaView()[victim]!.state === 'ready' && llamaServerOf(replicas, victim).pid !== oldPid ? true : undefined),
      'the healed replica',
      60_000,
    );
    const after = await Promise.all([20, 21, 22, 23].map((i) => chatTurn(client, model, opening(i), 4)));
    expect(after.some((t) => t.replica === victim)).toBe(true);

    // A rolling live resize restarts each child in turn (llama-server-rebuild.test.ts tests it in depth).
    const outcomes = await replicas.rebuild({ replica: 'all', change: { contextSize: 1536 }, skipPrecheck: false, barrierTimeoutMs: 10_000 });
    expect(outcomes.map((o) => o.outcome)).toEqual(['Applied', 'Applied']);
    expect(replicas.replicaView().map((v) => [v.state, replicas.readyInfo(v.replica)?.sizes.contextSize])).toEqual([
      ['ready', 1536],
      ['ready', 1536],
    ]);
  }, 300_000);

  it('sends a turn whose slot another conversation took back to the replica whose prompt cache saved it, and shows the entry in its view', async () => {
    // Lending off (a disk budget of 0): replica 0's prompt cache is the only copy of a's turn, which replica 1
    // could otherwise borrow as a slot file wherever the router measures it faster (the test below).
    const { client, model, replicas } = await serveLlamaServer({
      replicas: 2,
      engine: { kind: 'llama-server', contextSize: 2048, slots: 1, threads: 1, prefixCache: { diskBytes: 0 } },
    });

    // One slot a replica: a on replica 0; then b runs on replica 1 while c comes, so c takes replica 0's slot from a.
    const a = opening(30);
    const first = await chatTurn(client, model, a);
    const b = await client.chat.completions.create({
      model,
      messages: opening(31),
      max_tokens: 1000,
      temperature: 0,
      stream: true,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const bChunks = b[Symbol.asyncIterator]();
    await waitFor(() => (replicas.replicaView()[1]!.running === 1 ? true : undefined), 'b running on replica 1', 20_000);
    const c = await chatTurn(client, model, opening(32));
    while (!(await bChunks.next()).done);
    expect([first.replica, c.replica]).toEqual([0, 0]);
    // llama-server saved a's tokens in its host-memory prompt cache; core mirrors that as replica 0's RAM tier.
    const tiers = replicas.replicaView()[0]!.prefixTiers!;
    // Its budget: `--cache-ram` (8 GiB) less a copy of the slot's 2048 cells, which llama-server also keeps there.
    // No disk tier: it lends no slot files.
    expect(tiers.map((t) => t.tier)).toEqual(['ram']);
    expect(tiers[0]!.budgetBytes).toBeLessThan(8192 * 1024 * 1024);
    expect(tiers[0]!.budgetBytes).toBeGreaterThan(8000 * 1024 * 1024);
    expect(tiers[0]!.entries.map((e) => e.tokens)).toEqual([blockFloor(first.promptTokens + first.completionTokens)]);
    expect(tiers[0]!.bytes).toBeGreaterThan(0);
    expect(replicas.replicaView()[1]!.prefixTiers![0]!.entries).toEqual([]);

    // a's next turn: no slot holds it, replica 0's cache does. It goes there, and llama-server loads it.
    const second = await chatTurn(client, model, [...a, { role: 'assistant', content: first.text }, { role: 'user', content: 'And tomorrow?' }]);
    expect(second.replica).toBe(0);
    expect(second.cachedTokens, "llama-server's cache_n").toBeGreaterThanOrEqual(blockFloor(first.promptTokens));
    // a left the cache for the slot; c, whose slot a took, is saved in its place.
    expect(replicas.replicaView()[0]!.prefixTiers![0]!.entries.map((e) => e.tokens)).toEqual([blockFloor(c.promptTokens + c.completionTokens)]);
  }, 300_000);

  it('restores a conversation whose replica is busy on the free one from the slot file its replica lent, and shows the files as the disk tier', async () => {
    const { served, client, model, replicas } = await serveLlamaServer({
      replicas: 2,
      engine: { kind: 'llama-server', contextSize: 2048, slots: 1, threads: 1 },
    });
    const diskTier = (replica: number) => replicas.replicaView()[replica]!.prefixTiers!.find((t) => t.tier === 'disk')!;

    // a on replica 0, whose slot is saved to a file after the reply (the slot held all but the last token).
    const a = opening(50);
    const first = await chatTurn(client, model, a);
    expect(first.replica).toBe(0);
    const lent = await waitFor(() => diskTier(0).entries[0], 'replica 0 lending a', 20_000);
    expect(lent.tokens).toBe(first.promptTokens + first.completionTokens - 1);
    expect(lent.bytes).toBeGreaterThan(0);
    expect(diskTier(0).budgetBytes).toBe(2 * 2 ** 30);
    const folder = replicas.readyInfo(0)!.prefixCacheShare!.dirs.disk;
    expect((await readdir(folder)).filter((f) => f.startsWith('lent-'))).toHaveLength(1);

    // b keeps replica 0 busy; a's next turn goes to the free replica 1, which restores a's file instead of prefilling.
    const b = await client.chat.completions.create({
      model,
      messages: [...a, { role: 'user', content: 'Now something long.' }],
      max_tokens: 1000,
      temperature: 0,
      stream: true,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const bChunks = b[Symbol.asyncIterator]();
    await bChunks.next();
    expect(replicas.replicaView()[0]!.running).toBe(1);
    const second = await chatTurn(client, model, [...a, { role: 'assistant', content: first.text }, { role: 'user', content: 'And tomorrow?' }]);
    expect(second.replica).toBe(1);
    expect(second.cachedTokens, "llama-server's cache_n").toBeGreaterThanOrEqual(blockFloor(first.promptTokens));
    // The owner keeps its file, and replica 1's link to it is gone.
    expect(diskTier(0).entries.map((e) => e.entry)).toContain(lent.entry);
    expect((await readdir(replicas.readyInfo(1)!.prefixCacheShare!.dirs.disk)).filter((f) => f.startsWith('borrowed-'))).toEqual([]);
    while (!(await bChunks.next()).done);
    await served.close();
  }, 300_000);

  it("turns a child's prompt cache off with the run config's RAM budget of 0: nothing saved, nothing mirrored", async () => {
    const { served, client, model, replicas } = await serveLlamaServer({
      replicas: 1,
      engine: { kind: 'llama-server', contextSize: 2048, slots: 1, threads: 1, prefixCache: { ramBytes: 0 } },
    });
    const command = (await readFile(`/proc/${replicas.replicaView()[0]!.pid}/cmdline`, 'utf8')).split('\0');
    expect(command[command.indexOf('--cache-ram') + 1]).toBe('0');

    // a, then b takes the only slot; with no prompt cache a's next turn prefills all but what b shares with it.
    const a = opening(40);
    const first = await chatTurn(client, model, a);
    await chatTurn(client, model, opening(41));
    expect(replicas.replicaView()[0]!.prefixTiers).toBeNull();
    const second = await chatTurn(client, model, [...a, { role: 'assistant', content: first.text }, { role: 'user', content: 'And tomorrow?' }]);
    expect(second.cachedTokens, "llama-server's cache_n").toBeLessThan(64);
    expect(second.promptTokens).toBeGreaterThan(first.promptTokens);
    await served.close();
  }, 300_000);
});
