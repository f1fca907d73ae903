/**
 * `/metrics`, written by prom-client in Prometheus text format: the workstation's request metrics
 * (`metrics/request-metrics.ts`: histograms and token counters by replica) and, read from the
 * workstation at each scrape, its state — per replica alive, where it runs, requests processing, slots
 * total and busy, KV cache use; the core-held queue (waiting, refused); tokens per second; each GPU's
 * memory and utilisation (none without a GPU); the arena's size. Names are llama-server's where it has
 * the figure, with a `manifold_` prefix (docs/ARCHITECTURE.md says why).
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { GpuReport } from '../../common/contract.js';
import type { GlobalSlotView, ReplicaView } from '../replicas/replica-views.js';
import type { Workstation } from '../workstation.js';

type Labels = Record<string, string | number>;

/** The registry a front answers `/metrics` from: the workstation's request metrics and its state read at each scrape. */
export function metricsRegistry(workstation: Workstation): Registry {
  const state = new Registry();
  /** A gauge set at each scrape; its series are replaced, so a replica or card that went away goes with them. */
  const gauge = (
    name: string,
    help: string,
    samples: () => { labels?: Labels; value: number }[] | Promise<{ labels?: Labels; value: number }[]>,
    labelNames: string[] = [],
  ): void => {
    new Gauge({
      name: `manifold_${name}`,
      help,
      labelNames,
      registers: [state],
      async collect() {
        const values = await samples();
        this.reset();
        for (const s of values) this.set(s.labels ?? {}, s.value);
      },
    });
  };
  const perReplica = (name: string, help: string, value: (v: ReplicaView) => number): void =>
    gauge(name, help, () => workstation.replicas.replicaView().map((v) => ({ labels: { replica: v.replica }, value: value(v) })), ['replica']);
  /** One read of the slot view per scrape, shared by the gauges that need it (prom-client collects them together). */
  let slotsRead: Promise<GlobalSlotView[]> | null = null;
  const slots = (): Promise<GlobalSlotView[]> =>
    (slotsRead ??= workstation.replicas.slotsView().finally(() => {
      slotsRead = null;
    }));
  const perCard = (name: string, help: string, value: (c: GpuReport['cards'][number]) => number | null): void =>
    gauge(
      `gpu_${name}`,
      help,
      () =>
        workstation.gpuReport().cards.flatMap((c) => {
          const v = value(c);
          return v === null ? [] : [{ labels: { card: c.card ?? `replica${c.replica}`, name: c.name }, value: v }];
        }),
      ['card', 'name'],
    );

  gauge('queue_waiting', 'Requests waiting in the core-held queue for a slot.', () => [{ value: workstation.replicas.waiting }]);
  gauge('requests_deferred', "Requests waiting for a slot (llama-server's name; the same figure as manifold_queue_waiting).", () => [
    { value: workstation.replicas.waiting },
  ]);
  new Counter({
    name: 'manifold_queue_rejected_total',
    help: 'Requests refused by the queue: full (429) or waited past queue.timeoutMs (503).',
    labelNames: ['reason'],
    registers: [state],
    collect() {
      const { rejected } = workstation.replicas.queueStats;
      this.reset();
      for (const reason of ['full', 'timeout'] as const) this.inc({ reason }, rejected[reason]);
    },
  });
  perReplica('replica_alive', 'Whether the replica can take requests (1) or not (0).', (v) => (v.alive ? 1 : 0));
  gauge(
    'replica_info',
    'Where each replica runs: kind "local" for an engine child, else the remote peer\'s kind and URL.',
    () =>
      workstation.replicas.replicaView().map((v) => ({ labels: { replica: v.replica, kind: v.remote?.kind ?? 'local', url: v.remote?.url ?? '' }, value: 1 })),
    ['replica', 'kind', 'url'],
  );
  gauge(
    'remote_latency_seconds',
    "A remote replica's last health check round trip.",
    () =>
      workstation.replicas
        .replicaView()
        .flatMap((v) => (v.remote?.latencyMs == null ? [] : [{ labels: { replica: v.replica }, value: v.remote.latencyMs / 1000 }])),
    ['replica'],
  );
  perReplica('requests_processing', 'Requests bound to the replica and running there.', (v) => v.running);
  perReplica('slots_total', 'Slots of the replica.', (v) => v.slots);
  gauge(
    'slots_busy',
    'Slots of the replica in prefill or decode.',
    async () => {
      const all = await slots();
      return workstation.replicas
        .replicaView()
        .map((v) => ({ labels: { replica: v.replica }, value: all.filter((s) => s.replica === v.replica && s.state !== 'idle').length }));
    },
    ['replica'],
  );
  gauge(
    'kv_cache_usage_ratio',
    "Share of the replica's KV cache cells its slots hold (idle slots keep their prefix); none for a replica that reports no context size.",
    async () => {
      const all = await slots();
      return workstation.replicas.replicaView().flatMap((v) => {
        const sizes = workstation.replicas.readyInfo(v.replica)?.sizes;
        if (!sizes || sizes.contextSize * sizes.slots === 0) return [];
        const held = all.filter((s) => s.replica === v.replica).reduce((sum, s) => sum + s.heldTokens, 0);
        return [{ labels: { replica: v.replica }, value: held / (sizes.contextSize * sizes.slots) }];
      });
    },
    ['replica'],
  );
  gauge('tokens_per_second', 'Tokens generated per second over the last 10 seconds, all replicas.', () => [
    { value: workstation.throughput.tokensPerSecond() },
  ]);
  perCard('memory_used_bytes', 'GPU memory in use.', (c) => c.memoryUsedBytes);
  perCard('memory_total_bytes', 'GPU memory in all.', (c) => c.memoryTotalBytes);
  perCard('utilization_percent', 'How busy the GPU was over the last sample period (NVML).', (c) => c.utilizationPercent);
  gauge('arena_bytes', 'Bytes of the model held in the shared arena (0 without one).', () => {
    const arena = workstation.arenaStatus();
    return [{ value: arena.state === 'ready' ? arena.filledBytes : 0 }];
  });
  return Registry.merge([state, workstation.requestMetrics.registry]);
}
