/**
 * The dashboard's state: the workstation's info, replicas, slots, GPU report and arena, plus the
 * history of samples the charts draw (routed per replica, tokens/s, queue) and the recent log entries —
 * all fed by the contract's events (the log also backfilled from core on each connect), with named pure
 * selectors for what each panel shows.
 */
import {
  HISTORY_SECONDS,
  type ArenaStatus,
  type CallResult,
  type EventPayload,
  type GpuReport,
  type HistorySample,
  type LogEntry,
} from '../../../common/contract.js';
import type { ConnectionState } from '../transport/contract-client.js';
import type { SliceCreator } from './slice.js';
import { trimLog } from '../../../common/log-trim.js';

export type ReplicaView = EventPayload<'replicas'>[number];
export type SlotView = EventPayload<'slots'>[number];

/** One point of the charts (the throughput sample and the requests routed to each replica so far). */
export type Sample = HistorySample;

/** As many as core keeps (`getHistory`), so a backfill fills the charts. */
export const HISTORY_KEPT = HISTORY_SECONDS;
export const LOG_LINES_KEPT = 300;

export interface WorkstationSlice {
  connection: ConnectionState;
  info: CallResult<'getInfo'> | null;
  replicas: ReplicaView[];
  slots: SlotView[];
  gpus: GpuReport | null;
  arena: ArenaStatus | null;
  history: Sample[];
  logs: LogEntry[];
  /** `log` events taken so far: a backfill keeps the ones that arrived while it was being asked for. */
  logEventsTaken: number;
  /** Takes a connection state; on each (re)connect, what the panels show is fetched again. */
  setConnection(connection: ConnectionState): void;
  applyEvent<E extends 'replicas' | 'slots' | 'throughput' | 'gpus' | 'log'>(name: E, payload: EventPayload<E>): void;
  refreshInfo(): Promise<void>;
  /** Replaces the charts' history with core's kept series, keeping the samples that came after it. */
  refreshHistory(): Promise<void>;
  /** Replaces the log with core's recent entries (the previous run's last lines after a restart). */
  refreshLogs(): Promise<void>;
}

export const createWorkstationSlice: SliceCreator<WorkstationSlice> = (set, get, client) => ({
  connection: 'connecting',
  info: null,
  replicas: [],
  slots: [],
  gpus: null,
  arena: null,
  history: [],
  logs: [],
  logEventsTaken: 0,
  setConnection: (connection) => {
    set({ connection });
    if (connection !== 'connected') return;
    void get().refreshInfo();
    void get()
      .refreshLogs()
      .catch(() => {});
    void get()
      .refreshHistory()
      .catch(() => {});
  },
  applyEvent: (name, payload) => {
    switch (name) {
      case 'replicas':
        set({ replicas: payload as ReplicaView[] });
        return;
      case 'slots':
        set({ slots: payload as SlotView[] });
        return;
      case 'gpus':
        set({ gpus: payload as GpuReport });
        return;
      case 'log':
        set((s) => ({ logs: trimLog([...s.logs, payload as LogEntry], LOG_LINES_KEPT), logEventsTaken: s.logEventsTaken + 1 }));
        return;
      case 'throughput': {
        const t = payload as EventPayload<'throughput'>;
        set((s) => ({ history: [...s.history, { ...t, routed: s.replicas.map((r) => r.routed) }].slice(-HISTORY_KEPT) }));
        return;
      }
    }
  },
  refreshInfo: async () => {
    const [info, arena] = await Promise.all([client.call('getInfo', {}), client.call('getArena', {})]);
    set({ info, arena });
  },
  refreshHistory: async () => {
    const kept = await client.call('getHistory', {});
    const last = kept.at(-1)?.at ?? 0;
    set((s) => ({ history: [...kept, ...s.history.filter((sample) => sample.at > last)].slice(-HISTORY_KEPT) }));
  },
  refreshLogs: async () => {
    const takenBefore = get().logEventsTaken;
    const recent = await client.call('getLogs', {});
    const last = recent.at(-1)?.seq ?? 0;
    set((s) => {
      // Events that came while the call was out: those after the answer's last entry are newer than it.
      const arrived = s.logs.slice(s.logs.length - Math.min(s.logs.length, s.logEventsTaken - takenBefore));
      return { logs: trimLog([...recent, ...arrived.filter((e) => e.seq > last)], LOG_LINES_KEPT) };
    });
  },
});

/** The log panel's text: the last `lines` entries, each as `HH:MM:SS level line`. */
export function logText(logs: readonly LogEntry[], lines = 200): string {
  return logs
    .slice(-lines)
    .map((e) => `${new Date(e.time).toTimeString().slice(0, 8)} ${e.level.padEnd(5)} ${e.line}`)
    .join('\n');
}

/** Percent of a replica's prompt tokens that came from its KV cache. */
export function cacheHitPercent(view: Pick<ReplicaView, 'cacheHitTokens' | 'promptTokens'>): number {
  return view.promptTokens === 0 ? 0 : Math.round((100 * view.cacheHitTokens) / view.promptTokens);
}

export interface ReplicaCard {
  replica: number;
  state: ReplicaView['state'];
  /** "cards 0,1", "CPU, cores 0,2", "CPU" or, for a remote replica, "llama-server at http://…". */
  where: string;
  /** A remote replica's last health round trip, as text ("12 ms"); null for a local engine. */
  latency: string | null;
  running: number;
  routed: number;
  slots: number;
  hitPercent: number;
  pid: number | null;
  latchReason: string | null;
  /** "4096 tokens × 2 slots", "f16", "0 of 28" style figures of the engine as it runs now; null before it reports. */
  sizes: { context: string; kvType: string; gpuLayers: string } | null;
  /** While its engine evaluates a live resize's kept prefixes again: the bar's figures and its words; null otherwise. */
  reEvaluation: { done: number; total: number; label: string } | null;
}

export function selectReplicaCards(state: Pick<WorkstationSlice, 'replicas'>): ReplicaCard[] {
  return state.replicas.map((r) => ({
    replica: r.replica,
    state: r.state,
    where: r.remote
      ? `${r.remote.kind} at ${r.remote.url}`
      : r.gpus.length
        ? `cards ${r.gpus.join(',')}`
        : r.cpus.length
          ? `CPU, cores ${r.cpus.join(',')}`
          : 'CPU',
    latency: r.remote ? (r.remote.latencyMs === null ? '—' : `${Math.round(r.remote.latencyMs)} ms`) : null,
    running: r.running,
    routed: r.routed,
    slots: r.slots,
    hitPercent: cacheHitPercent(r),
    pid: r.pid,
    latchReason: r.latchReason,
    sizes: r.sizes ? { context: `${r.sizes.contextSize} tokens × ${r.sizes.slots} slots`, kvType: r.sizes.kvType, gpuLayers: String(r.sizes.gpuLayers) } : null,
    reEvaluation: r.reEvaluation
      ? {
          ...r.reEvaluation,
          label: `evaluating ${r.reEvaluation.total} kept ${r.reEvaluation.total === 1 ? 'prefix' : 'prefixes'} again: ${r.reEvaluation.done}/${r.reEvaluation.total}`,
        }
      : null,
  }));
}

/** The charts' rows: seconds ago, tokens/s, queue, and `r<i>` routed per replica. */
export function selectChartRows(state: Pick<WorkstationSlice, 'history'>): Record<string, number>[] {
  const last = state.history.at(-1)?.at ?? 0;
  return state.history.map((s) => ({
    t: Math.round((s.at - last) / 1000),
    tokensPerSecond: Math.round(s.tokensPerSecond * 10) / 10,
    running: s.running,
    waiting: s.waiting,
    ...Object.fromEntries(s.routed.map((n, i) => [`r${i}`, n])),
  }));
}

/** The queue line under the charts: waiting now, refused so far, and the recent waits for a slot. */
export function selectQueueSummary(state: Pick<WorkstationSlice, 'history'>): string {
  const last = state.history.at(-1);
  if (!last) return 'queue: no sample yet';
  const { queue } = last;
  const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);
  return `queue: ${last.waiting} waiting · ${queue.rejected} refused · wait p50 ${ms(queue.waitP50Ms)}, p90 ${ms(queue.waitP90Ms)}, p99 ${ms(queue.waitP99Ms)}`;
}

export interface SlotRow {
  key: string;
  replica: number;
  slot: number;
  state: SlotView['state'];
  heldTokens: number;
  conversation: string;
}

/** A conversation as the slot view names it: its chat title where the window knows it, else its id's first 8 characters; "—" when not known. */
function conversationName(id: string | null, titles: ReadonlyMap<string, string>): string {
  return id ? (titles.get(id) ?? id.slice(0, 8)) : '—';
}

/** `titles`: the chat's conversation titles by id. */
export function selectSlotRows(state: Pick<WorkstationSlice, 'slots'>, titles: ReadonlyMap<string, string> = new Map()): SlotRow[] {
  return state.slots.map((s) => ({
    key: `${s.replica}:${s.replicaSlot}`,
    replica: s.replica,
    slot: s.slot,
    state: s.state,
    heldTokens: s.heldTokens,
    conversation: conversationName(s.conversationId, titles),
  }));
}

export interface PrefixTierRow {
  key: string;
  replica: number;
  tier: 'RAM' | 'disk';
  entries: number;
  bytes: number;
  budgetBytes: number;
  /** The newest saved entries (at most SAVED_SHOWN), newest first: their conversation and tokens. */
  saved: { key: number; conversation: string; tokens: number }[];
  /** How many older entries are not listed. */
  more: number;
}

/** Saved entries named per tier: the newest few, so the row stays one line. */
const SAVED_SHOWN = 3;

/** The slot view's prefix-cache rows: per replica that keeps one, each tier with its entries, bytes and budget. */
export function selectPrefixTierRows(state: Pick<WorkstationSlice, 'replicas'>, titles: ReadonlyMap<string, string> = new Map()): PrefixTierRow[] {
  return state.replicas.flatMap((r) =>
    (r.prefixTiers ?? []).map((t) => ({
      key: `${r.replica}:${t.tier}`,
      replica: r.replica,
      tier: t.tier === 'ram' ? ('RAM' as const) : ('disk' as const),
      entries: t.entries.length,
      bytes: t.bytes,
      budgetBytes: t.budgetBytes,
      saved: t.entries
        .slice(-SAVED_SHOWN)
        .reverse()
        .map((e) => ({ key: e.entry, conversation: conversationName(e.conversationId, titles), tokens: e.tokens })),
      more: Math.max(0, t.entries.length - SAVED_SHOWN),
    })),
  );
}

/** What the GPU panel says: its cards, or the one line that there is no GPU. */
export function selectGpuPanel(state: Pick<WorkstationSlice, 'gpus'>): { note: string; cards: GpuReport['cards'] } {
  return state.gpus ? { note: state.gpus.note, cards: state.gpus.cards } : { note: 'waiting for the first GPU report', cards: [] };
}
