/**
 * The renderer's zustand store: each slice's actions and named selectors, driven by a scripted contract
 * client (pure logic: no engine, no transport).
 */
import { describe, expect, it } from 'vitest';
import type { CallArgs, CallName, CallResult, EventName, EventPayload } from '../../common/contract.js';
import type { ReplicaRebuildOutcome } from '../../common/rebuild.js';
import { connectStore, createAppStore } from '../../renderer/src/store/app-store.js';
import { selectIsStreaming, selectShownMessages } from '../../renderer/src/store/chat-slice.js';
import { parseCards, selectLoadProgress } from '../../renderer/src/store/loader-slice.js';
import { describeOutcome, rebuildErrorInWords, selectCanApply, selectRebuildChange, selectRebuildProgress } from '../../renderer/src/store/rebuild-slice.js';
import {
  cacheHitPercent,
  logText,
  selectChartRows,
  selectGpuPanel,
  selectQueueSummary,
  selectReplicaCards,
  selectSlotRows,
  HISTORY_KEPT,
} from '../../renderer/src/store/workstation-slice.js';
import { trimLog } from '../../common/log-trim.js';
import { recentName } from '../../renderer/src/components/loader/ModelLoader.js';
import type { ContractClient } from '../../renderer/src/transport/contract-client.js';

type Script = { [N in CallName]?: (args: CallArgs<N>) => CallResult<N> | Promise<CallResult<N>> };

/** A contract client whose calls answer from a script and whose events the test emits. */
function scriptedClient(script: Script) {
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const calls: { name: string; args: unknown }[] = [];
  const client: ContractClient = {
    call: async (name, args) => {
      calls.push({ name, args });
      const answer = script[name] as ((a: unknown) => unknown) | undefined;
      if (!answer) throw new Error(`unscripted call ${name}`);
      return answer(args) as never;
    },
    on: (name, listener) => {
      const set = listeners.get(name) ?? new Set();
      listeners.set(name, set);
      set.add(listener as (p: unknown) => void);
      return () => set.delete(listener as (p: unknown) => void);
    },
    onConnection: () => () => {},
  };
  const emit = <E extends EventName>(name: E, payload: EventPayload<E>) => listeners.get(name)?.forEach((l) => l(payload));
  return { client, calls, emit };
}

const replica = (i: number, patch: Partial<EventPayload<'replicas'>[number]> = {}): EventPayload<'replicas'>[number] => ({
  replica: i,
  alive: true,
  running: 0,
  routed: 0,
  slots: 2,
  state: 'ready',
  latchReason: null,
  gpus: [],
  cpus: [i],
  cacheHitTokens: 0,
  promptTokens: 0,
  completionTokens: 0,
  pid: 100 + i,
  remote: null,
  prefixTiers: null,
  sizes: null,
  reEvaluation: null,
  ...patch,
});

describe('workstation slice', () => {
  it('takes events into state, keeps a bounded history, and its selectors shape the panels', () => {
    const { client, emit } = scriptedClient({});
    const store = createAppStore(client);
    connectStore(store, client);
    emit('replicas', [replica(0, { routed: 3, cacheHitTokens: 30, promptTokens: 40 }), replica(1, { gpus: [2, 3], state: 'maintenance' })]);
    const cards = selectReplicaCards(store.getState());
    expect(cards.map((c) => [c.replica, c.state, c.where, c.hitPercent])).toEqual([
      [0, 'ready', 'CPU, cores 0', 75],
      [1, 'maintenance', 'cards 2,3', 0],
    ]);
    expect(cacheHitPercent({ cacheHitTokens: 0, promptTokens: 0 })).toBe(0);
    expect(cards.map((c) => c.latency)).toEqual([null, null]);
    const remote = selectReplicaCards({
      replicas: [replica(2, { cpus: [], pid: null, remote: { url: 'http://gpu-box-2:8080', kind: 'llama-server', latencyMs: 12.4 } })],
    });
    expect(remote.map((c) => [c.where, c.latency])).toEqual([['llama-server at http://gpu-box-2:8080', '12 ms']]);
    for (let i = 0; i < HISTORY_KEPT + 5; i++)
      emit('throughput', { at: 1000 * i, tokensPerSecond: i, running: 1, waiting: 0, queue: { rejected: 2, waitP50Ms: 40, waitP90Ms: 1500, waitP99Ms: 3000 } });
    const rows = selectChartRows(store.getState());
    expect(rows).toHaveLength(HISTORY_KEPT);
    expect(rows.at(-1)).toEqual({ t: 0, tokensPerSecond: HISTORY_KEPT + 4, running: 1, waiting: 0, r0: 3, r1: 0 });
    expect(rows[0]!.t).toBe(-(HISTORY_KEPT - 1));
    expect(selectQueueSummary(store.getState())).toBe('queue: 0 waiting · 2 refused · wait p50 40 ms, p90 1.5 s, p99 3.0 s');
    emit('slots', [{ slot: 0, replica: 0, replicaSlot: 0, state: 'decode', heldTokens: 70, conversationId: 'abcdef1234', lastUsed: 1 }]);
    expect(selectSlotRows(store.getState())).toEqual([{ key: '0:0', replica: 0, slot: 0, state: 'decode', heldTokens: 70, conversation: 'abcdef12' }]);
    // The chat's title where the window knows the conversation.
    expect(selectSlotRows(store.getState(), new Map([['abcdef1234', 'Rivers of Europe']]))[0]!.conversation).toBe('Rivers of Europe');
    expect(selectGpuPanel(store.getState()).note).toBe('waiting for the first GPU report');
    emit('gpus', { source: 'none', cards: [], note: 'no GPU: none here' });
    expect(selectGpuPanel(store.getState())).toEqual({ note: 'no GPU: none here', cards: [] });
    emit('log', { seq: 1, time: 0, level: 'warn', line: 'hello' });
    expect(store.getState().logs.map((e) => e.line)).toEqual(['hello']);
    expect(logText(store.getState().logs)).toMatch(/^\d\d:\d\d:\d\d warn  hello$/);
  });

  it('backfills the log on connect, keeping the entries that arrived while it was asked for, once each', async () => {
    const entry = (seq: number, line: string) => ({ seq, time: 1000 * seq, level: 'info' as const, line });
    let answer!: (entries: ReturnType<typeof entry>[]) => void;
    const { client, emit } = scriptedClient({
      getLogs: () => new Promise((resolve) => (answer = resolve)),
      getInfo: () => new Promise(() => {}),
      getArena: () => new Promise(() => {}),
    });
    const store = createAppStore(client);
    connectStore(store, client);
    emit('log', entry(1, 'from before a reconnect'));
    store.getState().setConnection('connected');
    // While the call is out: one entry the answer holds, one it does not.
    emit('log', entry(7, 'seen by both'));
    emit('log', entry(8, 'newer than the answer'));
    answer([entry(5, 'previous run'), entry(6, 'started'), entry(7, 'seen by both')]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(store.getState().logs.map((e) => e.line)).toEqual(['previous run', 'started', 'seen by both', 'newer than the answer']);
  });

  it('backfills the charts from core’s kept series on connect, keeping samples newer than it', async () => {
    const sample = (at: number, tokensPerSecond: number) => ({
      at,
      tokensPerSecond,
      running: 0,
      waiting: 0,
      queue: { rejected: 0, waitP50Ms: 0, waitP90Ms: 0, waitP99Ms: 0 },
      routed: [at / 1000],
    });
    let answer!: (samples: ReturnType<typeof sample>[]) => void;
    const { client, emit } = scriptedClient({
      getHistory: () => new Promise((resolve) => (answer = resolve)),
      getLogs: () => [],
      getInfo: () => new Promise(() => {}),
      getArena: () => new Promise(() => {}),
    });
    const store = createAppStore(client);
    connectStore(store, client);
    store.getState().setConnection('connected');
    emit('replicas', [replica(0, { routed: 9 })]);
    emit('throughput', { ...sample(9000, 40), routed: undefined } as never);
    answer([sample(1000, 0), sample(2000, 120), sample(3000, 0)]);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(selectChartRows(store.getState()).map((r) => [r.t, r.tokensPerSecond, r.r0])).toEqual([
      [-8, 0, 1],
      [-7, 120, 2],
      [-6, 0, 3],
      [0, 40, 9],
    ]);
  });

  it('shows each replica’s context, slots, KV type and GPU layers as its engine reports them', () => {
    const cards = selectReplicaCards({ replicas: [replica(0, { sizes: { contextSize: 2048, slots: 2, kvType: 'q8_0', gpuLayers: 28 } }), replica(1)] });
    expect(cards.map((c) => c.sizes)).toEqual([{ context: '2048 tokens × 2 slots', kvType: 'q8_0', gpuLayers: '28' }, null]);
  });

  it('shows a bar while a resize’s kept prefixes are evaluated again, and none once done', () => {
    const cards = selectReplicaCards({
      replicas: [replica(0, { reEvaluation: { done: 1, total: 4 } }), replica(1, { reEvaluation: { done: 0, total: 1 } }), replica(2)],
    });
    expect(cards.map((c) => c.reEvaluation)).toEqual([
      { done: 1, total: 4, label: 'evaluating 4 kept prefixes again: 1/4' },
      { done: 0, total: 1, label: 'evaluating 1 kept prefix again: 0/1' },
      null,
    ]);
  });
});

describe('resize slice', () => {
  it('says a refused resize in the panel’s words and clears the last round’s outcomes on a new check', async () => {
    expect(rebuildErrorInWords('precheckRebuild: change.contextSize: at most 4194304 (got 5000000)')).toBe('Context size: at most 4194304 (got 5000000)');
    expect(rebuildErrorInWords('rebuild: replica: there is no replica 3 (there are 2)')).toBe('Replica: there is no replica 3 (there are 2)');
    expect(rebuildErrorInWords('the connection to the workstation closed')).toBe('the connection to the workstation closed');
    const { client } = scriptedClient({
      precheckRebuild: () => {
        throw new Error('precheckRebuild: change.contextSize: at most 4194304 (got 5000000)');
      },
    });
    const store = createAppStore(client);
    store.setState({ outcomes: [{ replica: 0, outcome: 'Skipped', reason: 'an old round' }] as never });
    store.getState().setRebuildForm({ contextSize: '5000000' });
    await store.getState().precheckRebuild();
    expect(store.getState().rebuildError).toBe('Context size: at most 4194304 (got 5000000)');
    expect(store.getState().outcomes).toBeNull();
    expect(selectRebuildProgress({ rebuildForm: { ...store.getState().rebuildForm, replica: 'all' }, stages: { 0: 'done', 1: 'barrier' } }, 2)).toBeCloseTo(
      (1 + 1 / 3) / 2,
    );
    expect(selectRebuildProgress({ rebuildForm: { ...store.getState().rebuildForm, replica: 1 }, stages: { 1: 'done' } }, 2)).toBe(1);
  });

  it('turns the form into a change, offers Apply only after a pre-check that fits, and voids it on edit', async () => {
    const applied: ReplicaRebuildOutcome = {
      replica: 0,
      outcome: 'Applied',
      engine_preserved: true,
      pools: ['kv'],
      sizes: { contextSize: 2048, slots: 2, kvType: 'f16', gpuLayers: 0 },
      prefixes: { kept: 1, dropped: 0, slots: [] },
      timings: { saveMs: 1, teardownMs: 1, allocateMs: 1, restoreMs: 1 },
    };
    const { client, calls } = scriptedClient({
      precheckRebuild: () => [
        { replica: 0, fits: true, pools: ['kv'], needed: { ram: 1, vram: 0 }, available: { ram: 2, vram: 0 }, shortfall: { ram: 0, vram: 0 }, reason: 'fits' },
      ],
      rebuild: () => [applied],
    });
    const store = createAppStore(client);
    const s = store.getState;
    expect(selectRebuildChange(s())).toBeNull();
    s().setRebuildForm({ contextSize: '2048', gpuLayers: 'auto' });
    expect(selectRebuildChange(s())).toEqual({ contextSize: 2048, gpuLayers: 'auto' });
    s().setRebuildForm({ slots: 'two' });
    expect(selectRebuildChange(s())).toBeNull();
    await s().precheckRebuild();
    expect(s().rebuildError).toMatch(/give a context size/);
    s().setRebuildForm({ slots: '', gpuLayers: '' });
    expect(selectCanApply(s())).toBe(false);
    await s().precheckRebuild();
    expect(selectCanApply(s())).toBe(true);
    s().setRebuildForm({ contextSize: '4096' });
    expect(selectCanApply(s())).toBe(false);
    await s().precheckRebuild();
    await s().applyRebuild();
    expect(calls.filter((c) => c.name === 'rebuild')).toEqual([{ name: 'rebuild', args: { replica: 'all', change: { contextSize: 4096 } } }]);
    expect(s().outcomes!.map(describeOutcome)).toEqual(['replica 0: Applied — 2 slots × 2048 tokens, 1 prefix kept']);
    expect(describeOutcome({ replica: 1, outcome: 'Latched', engine_preserved: false, reason: 'alloc', rollback_error: 'restore' })).toBe(
      'replica 1: Latched — alloc; rollback: restore',
    );
  });
});

describe('chat slice', () => {
  it("applies a frame's streamed pieces in one store update, not one per token (8 streams froze the tab)", async () => {
    const conversation = {
      id: 'c1',
      title: 'New chat',
      systemPrompt: 's',
      sampling: { temperature: 0.8, topP: 0.95, topK: 40, maxTokens: 16, seed: null, thinking: 'default' as const, thinkingBudget: null },
      messages: [],
      createdAt: 1,
      updatedAt: 1,
      source: 'window' as const,
    };
    const { client, emit } = scriptedClient({ createConversation: () => conversation, sendMessage: () => new Promise(() => {}), listConversations: () => [] });
    const frames: (() => void)[] = [];
    (globalThis as { requestAnimationFrame?: (cb: () => void) => number }).requestAnimationFrame = (cb) => frames.push(cb);
    try {
      const store = createAppStore(client);
      connectStore(store, client);
      void store.getState().sendMessage('hi');
      await new Promise((r) => setTimeout(r, 0));
      let updates = 0;
      store.subscribe(() => updates++);
      for (let i = 0; i < 50; i++) emit('chat', { conversationId: 'c1', messageId: 'a1', text: `t${i} `, part: 'content' });
      expect(updates).toBe(0);
      expect(frames).toHaveLength(1);
      frames.shift()!();
      expect(updates).toBe(1);
      expect(selectShownMessages(store.getState()).at(-1)!.content).toBe(Array.from({ length: 50 }, (_, i) => `t${i} `).join(''));
    } finally {
      delete (globalThis as { requestAnimationFrame?: unknown }).requestAnimationFrame;
    }
  });

  it('shows the question and the streaming answer, then the stored conversation with who served it', async () => {
    const conversation = {
      id: 'c1',
      title: 'New chat',
      systemPrompt: 's',
      sampling: { temperature: 0.8, topP: 0.95, topK: 40, maxTokens: 16, seed: null, thinking: 'default' as const, thinkingBudget: null },
      messages: [],
      createdAt: 1,
      updatedAt: 1,
      source: 'window' as const,
    };
    const answered = {
      ...conversation,
      title: 'hi',
      messages: [
        { id: 'u1', role: 'user' as const, content: 'hi', servedBy: null, stopped: false, error: null, state: 'complete' as const, writer: null },
        {
          id: 'a1',
          role: 'assistant' as const,
          content: 'hello there',
          servedBy: { replica: 1, slot: 2, reusedTokens: 0, promptTokens: 9, completionTokens: 2 },
          stopped: false,
          error: null,
          state: 'complete' as const,
          writer: null,
        },
      ],
    };
    let release: () => void = () => {};
    const { client, emit } = scriptedClient({
      createConversation: () => conversation,
      sendMessage: () => new Promise((resolve) => (release = () => resolve(answered.messages[1]!))),
      getConversation: () => answered,
      listConversations: () => [{ id: 'c1', title: 'hi', messages: 2, updatedAt: 2, source: 'window' as const, damaged: null }],
    });
    const store = createAppStore(client);
    connectStore(store, client);
    const s = store.getState;
    const sending = s().sendMessage('hi');
    await new Promise((r) => setTimeout(r, 0));
    expect(selectIsStreaming(s())).toBe(true);
    emit('chat', { conversationId: 'c1', messageId: 'a1', text: 'let me see', part: 'reasoning' });
    emit('chat', { conversationId: 'c1', messageId: 'a1', text: 'hello', part: 'content' });
    emit('chat', { conversationId: 'c1', messageId: 'a1', text: ' there', part: 'content' });
    emit('chat', { conversationId: 'other', messageId: 'x', text: 'ignored', part: 'content' });
    expect(selectShownMessages(s()).map((m) => [m.role, m.content, m.reasoning, m.streaming])).toEqual([
      ['user', 'hi', undefined, false],
      ['assistant', 'hello there', 'let me see', true],
    ]);
    release();
    await sending;
    expect(selectIsStreaming(s())).toBe(false);
    expect(selectShownMessages(s()).map((m) => [m.role, m.content, m.servedBy?.replica ?? null])).toEqual([
      ['user', 'hi', null],
      ['assistant', 'hello there', 1],
    ]);
    expect(s().conversations[0]!.title).toBe('hi');
  });

  it('shows the live answer instead of its copy saved as it streams, and an interrupted answer as interrupted', () => {
    const message = (id: string, role: 'user' | 'assistant', content: string, state: 'complete' | 'streaming' | 'interrupted') => ({
      id,
      role,
      content,
      servedBy: null,
      stopped: false,
      error: null,
      state,
      writer: null,
    });
    const base = {
      id: 'c1',
      title: 't',
      systemPrompt: 's',
      sampling: { temperature: 0.8, topP: 0.95, topK: 40, maxTokens: 16, seed: null, thinking: 'default' as const, thinkingBudget: null },
      createdAt: 1,
      updatedAt: 1,
      source: 'window' as const,
    };
    const streamingHere = {
      active: { ...base, messages: [message('u1', 'user', 'hi', 'complete'), message('a1', 'assistant', 'hel', 'streaming')] },
      streaming: { c1: { userText: 'hi', messageId: 'a1', text: 'hello', reasoning: '', thinkingFrom: null, thinkingTo: null } },
    };
    expect(selectShownMessages(streamingHere).map((m) => [m.id, m.content, m.streaming])).toEqual([
      ['u1', 'hi', false],
      ['a1', 'hello', true],
    ]);
    const afterCrash = {
      active: { ...base, messages: [message('u1', 'user', 'hi', 'complete'), message('a1', 'assistant', 'hel', 'interrupted')] },
      streaming: {},
    };
    expect(selectShownMessages(afterCrash).map((m) => [m.id, m.state, m.streaming])).toEqual([
      ['u1', 'complete', false],
      ['a1', 'interrupted', false],
    ]);
  });

  it('reports a damaged conversation instead of showing an empty chat', async () => {
    const { client } = scriptedClient({
      getConversation: () => {
        throw new Error('conversation c9 is damaged: its file is not valid JSON (a torn write?)');
      },
    });
    const store = createAppStore(client);
    await store.getState().openConversation('c9');
    expect(store.getState().active).toBeNull();
    expect(store.getState().chatError).toMatch(/damaged/);
    expect(selectShownMessages(store.getState())).toEqual([]);
  });
});

describe('loader slice', () => {
  it('inspects, loads with the plan, follows the steps, and keeps a clear error', async () => {
    const { client, calls, emit } = scriptedClient({
      inspectModel: ({ path }) => {
        if (path.endsWith('bad.gguf')) throw new Error(`${path}: not a GGUF file`);
        return { path, fileBytes: 10, name: 'tiny', architecture: 'llama', parameters: 1e6, quantisation: 'F32', contextLength: 4096, layers: 2, fits: [] };
      },
      loadModel: () => ({
        status: 'ok',
        model: 'tiny',
        replicas: 2,
        replicas_alive: 2,
        totalSlots: 4,
        maxContext: 1024,
        routing: 'prefix',
        apiBase: '/v1',
        thinks: false,
      }),
      getInfo: () => ({
        status: 'ok',
        model: 'tiny',
        replicas: 2,
        replicas_alive: 2,
        totalSlots: 4,
        maxContext: 1024,
        routing: 'prefix',
        apiBase: '/v1',
        thinks: false,
      }),
      getArena: () => ({
        state: 'off',
        kind: null,
        reason: 'shared_arena is off',
        modelBytes: 0,
        filledBytes: 0,
        sha256: null,
        enginePath: null,
        warning: null,
        fillMs: null,
      }),
      listModels: () => ({ modelsDir: null, recent: ['/m/tiny.gguf'], found: [] }),
    });
    const store = createAppStore(client);
    connectStore(store, client);
    const s = store.getState;
    s().setModelPath('/m/bad.gguf');
    await s().inspectModel();
    expect(s().loaderError).toBe('/m/bad.gguf: not a GGUF file');
    s().setModelPath('/m/tiny.gguf');
    s().setPlan({ device: 'cpu', replicas: 2, contextSize: 1024 });
    await s().inspectModel();
    expect(s().inspection?.architecture).toBe('llama');
    expect(selectLoadProgress(s())).toBeNull();
    const loading = s().loadModel();
    emit('load', { step: 'arena', detail: 'shared_arena is off', fraction: 0 });
    emit('load', { step: 'replicas', detail: '1 of 2 replicas ready', fraction: 0.5 });
    expect(selectLoadProgress(s())).toEqual({ label: 'replicas: 1 of 2 replicas ready', fraction: 2.5 / 3 });
    emit('load', { step: 'ready', detail: '2/2 replicas of tiny', fraction: 1 });
    await loading;
    expect(selectLoadProgress(s())).toEqual({ label: 'ready: 2/2 replicas of tiny', fraction: 1 });
    expect(calls.find((c) => c.name === 'loadModel')?.args).toEqual({
      path: '/m/tiny.gguf',
      replicas: 2,
      contextSize: 1024,
      slots: 2,
      sharedArena: false,
      gpus: 'cpu',
    });
    expect(s().info?.status).toBe('ok');
    expect(s().sources?.recent).toEqual(['/m/tiny.gguf']);
    s().setPlan({ device: 'cards', cards: '0, 1,x' });
    await s().loadModel();
    expect(s().loaderError).toMatch(/list the cards as numbers/);
    expect(parseCards('0, 1,2')).toEqual([0, 1, 2]);
    s().setPlan({ cards: '2,3' });
    await s().loadModel();
    expect(calls.filter((c) => c.name === 'loadModel').at(-1)?.args).toMatchObject({ gpus: [2, 3] });
    emit('load', { step: 'failed', detail: 'file gone', fraction: null });
    expect(selectLoadProgress(s())).toEqual({ label: 'failed: file gone', fraction: 0 });
  });
});

describe('the library slice', () => {
  it("keeps a failed action's error on screen after the list is fetched again", async () => {
    const { client } = scriptedClient({
      listLibrary: () => ({ folder: '/models', models: [] }) as never,
      deleteModel: () => {
        throw new Error('deleteModel: the loaded model cannot be deleted; unload it first');
      },
    });
    const store = createAppStore(client);
    await store.getState().deleteModel('/models/a.gguf');
    expect(store.getState().libraryError).toContain('the loaded model cannot be deleted');
    expect(store.getState().library).not.toBeNull();
  });
});

describe('the downloads on (re)connect', () => {
  it("takes core's list as it stands, dropping entries core no longer has", async () => {
    const running = { uri: 'hf:o/r/a.gguf', state: 'downloading', downloadedBytes: 10, totalBytes: 100 } as never;
    const { client } = scriptedClient({ listDownloads: () => [running] });
    const store = createAppStore(client);
    store.getState().applyDownloadEvent({ uri: 'hf:o/r/stale.gguf', state: 'downloading', downloadedBytes: 1, totalBytes: 2 } as never);
    await store.getState().refreshDownloads();
    expect(Object.keys(store.getState().downloads)).toEqual(['hf:o/r/a.gguf']);
  });
});

describe('the log memory', () => {
  it("drops the oldest debug lines first, so the engines' output never pushes Manifold's own events out", () => {
    const entry = (seq: number, level: 'debug' | 'info'): { seq: number; level: 'debug' | 'info' } => ({ seq, level });
    const entries = [entry(1, 'info'), ...Array.from({ length: 10 }, (_, i) => entry(2 + i, 'debug')), entry(12, 'info')];
    expect(trimLog(entries, 5).map((e) => e.seq)).toEqual([1, 9, 10, 11, 12]);
    // Only events: the oldest go.
    expect(trimLog([entry(1, 'info'), entry(2, 'info'), entry(3, 'info')], 2).map((e) => e.seq)).toEqual([2, 3]);
    expect(trimLog(entries, 50)).toEqual(entries);
  });
});

describe('the loader recent models', () => {
  it('names a recent model by its file, with its folder where two share a name', () => {
    expect(recentName('/a/m.gguf', ['/a/m.gguf', '/b/x.gguf'])).toBe('m.gguf');
    expect(recentName('/a/m.gguf', ['/a/m.gguf', '/b/m.gguf'])).toBe('m.gguf (/a)');
  });
});
