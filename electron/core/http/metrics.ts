/**
 * `/metrics` in Prometheus text format, named in llama-server's style with a `manifold_` prefix:
 * per-replica alive, running, routed, prompt / cache-hit / predicted tokens, slots busy and total, and
 * the workstation's tokens per second, each GPU's memory and utilisation (NVML or the engines' own
 * figures; none without a GPU), the arena's size, and the core-held queue: requests waiting, requests
 * refused (full or timed out) and a histogram of how long requests waited for a slot.
 */
import { QUEUE_WAIT_BUCKETS_S } from '../queue/queue-stats.js';
import type { GlobalSlotView } from '../replicas/replica-set.js';
import type { Workstation } from '../workstation.js';

interface Family {
  name: string;
  help: string;
  type: 'gauge' | 'counter' | 'histogram';
  /** `suffix` names a histogram's `_bucket`, `_sum` and `_count` series. */
  samples: { suffix?: string; labels?: Record<string, string | number>; value: number }[];
}

function render(families: Family[]): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = s.labels ? `{${Object.entries(s.labels).map(([k, v]) => `${k}="${String(v)}"`).join(',')}}` : '';
      lines.push(`${f.name}${s.suffix ?? ''}${labels} ${Number.isFinite(s.value) ? s.value : 0}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export function renderMetrics(workstation: Workstation, slots: readonly GlobalSlotView[]): string {
  const views = workstation.replicas.replicaView();
  const perReplica = (name: string, help: string, type: Family['type'], value: (v: (typeof views)[number]) => number): Family => ({
    name: `manifold_${name}`,
    help,
    type,
    samples: views.map((v) => ({ labels: { replica: v.replica }, value: value(v) })),
  });
  const gpus = workstation.gpuReport();
  const perCard = (name: string, help: string, value: (c: (typeof gpus.cards)[number]) => number | null): Family => ({
    name: `manifold_gpu_${name}`,
    help,
    type: 'gauge',
    samples: gpus.cards.flatMap((c) => {
      const v = value(c);
      return v === null ? [] : [{ labels: { card: c.card ?? `replica${c.replica}`, name: c.name.replaceAll('"', "'") }, value: v }];
    }),
  });
  const arena = workstation.arenaStatus();
  const queue = workstation.replicas.queueStats;
  return render([
    { name: 'manifold_queue_waiting', help: 'Requests waiting in the core-held queue for a slot.', type: 'gauge', samples: [{ value: workstation.replicas.waiting }] },
    {
      name: 'manifold_queue_rejected_total',
      help: 'Requests refused by the queue: full (429) or waited past queue.timeoutMs (503).',
      type: 'counter',
      samples: (['full', 'timeout'] as const).map((reason) => ({ labels: { reason }, value: queue.rejected[reason] })),
    },
    {
      name: 'manifold_queue_wait_seconds',
      help: 'How long requests waited in the queue before a replica took them.',
      type: 'histogram',
      samples: [
        ...queue.bucketCounts.map((count, i) => ({ suffix: '_bucket', labels: { le: i < QUEUE_WAIT_BUCKETS_S.length ? String(QUEUE_WAIT_BUCKETS_S[i]) : '+Inf' }, value: count })),
        { suffix: '_sum', value: queue.waitSumSeconds },
        { suffix: '_count', value: queue.waitCount },
      ],
    },
    perReplica('replica_alive', 'Whether the replica can take requests (1) or not (0).', 'gauge', (v) => (v.alive ? 1 : 0)),
    {
      name: 'manifold_replica_info',
      help: 'Where each replica runs: kind "local" for an engine child, else the remote peer\'s kind and URL.',
      type: 'gauge',
      samples: views.map((v) => ({ labels: { replica: v.replica, kind: v.remote?.kind ?? 'local', url: v.remote?.url ?? '' }, value: 1 })),
    },
    {
      name: 'manifold_remote_latency_seconds',
      help: 'A remote replica\'s last health check round trip.',
      type: 'gauge',
      samples: views.flatMap((v) => (v.remote?.latencyMs == null ? [] : [{ labels: { replica: v.replica }, value: v.remote.latencyMs / 1000 }])),
    },
    perReplica('requests_processing', 'Requests bound to the replica and running there.', 'gauge', (v) => v.running),
    perReplica('requests_routed_total', 'Requests the router sent to the replica.', 'counter', (v) => v.routed),
    perReplica('prompt_tokens_total', 'Prompt tokens of the requests the replica served.', 'counter', (v) => v.promptTokens),
    perReplica('cache_hit_tokens_total', 'Prompt tokens reused from the replica’s KV cache.', 'counter', (v) => v.cacheHitTokens),
    perReplica('tokens_predicted_total', 'Tokens the replica generated.', 'counter', (v) => v.completionTokens),
    perReplica('slots_total', 'Slots of the replica.', 'gauge', (v) => v.slots),
    perReplica('slots_busy', 'Slots of the replica in prefill or decode.', 'gauge', (v) => slots.filter((s) => s.replica === v.replica && s.state !== 'idle').length),
    {
      name: 'manifold_tokens_per_second',
      help: 'Tokens generated per second over the last 10 seconds, all replicas.',
      type: 'gauge',
      samples: [{ value: workstation.throughput.tokensPerSecond() }],
    },
    perCard('memory_used_bytes', 'GPU memory in use.', (c) => c.memoryUsedBytes),
    perCard('memory_total_bytes', 'GPU memory in all.', (c) => c.memoryTotalBytes),
    perCard('utilization_percent', 'How busy the GPU was over the last sample period (NVML).', (c) => c.utilizationPercent),
    {
      name: 'manifold_arena_bytes',
      help: 'Bytes of the model held in the shared arena (0 without one).',
      type: 'gauge',
      samples: [{ value: arena.state === 'ready' ? arena.filledBytes : 0 }],
    },
  ]);
}
