/**
 * One card per replica: state (maintenance, latched and failed stand out), where it runs (a remote's URL and latency), its context, slots, KV type and
 * GPU layers as the engine runs now, running, routed, cache hits, and a bar while a resize's kept prefixes are evaluated again.
 */
import { useMemo } from 'react';
import { useApp } from '../../store/use-app-store.js';
import { selectReplicaCards } from '../../store/workstation-slice.js';

export function ReplicaCards({ onOpenModels }: { onOpenModels: () => void }) {
  const replicas = useApp((s) => s.replicas);
  // While the server does not answer, the last state it reported is not known to hold.
  const stale = useApp((s) => s.connection !== 'connected');
  const cards = useMemo(() => selectReplicaCards({ replicas }), [replicas]);
  if (cards.length === 0)
    return (
      <section className="panel empty">
        No model is loaded.{' '}
        <button className="link" onClick={onOpenModels}>
          Load a model
        </button>
      </section>
    );
  return (
    <section className="cards" aria-label="replicas">
      {cards.map((c) => (
        <article key={c.replica} className={stale ? 'card stale' : `card state-${c.state}`} data-testid={`replica-${c.replica}`}>
          <h3>
            Replica {c.replica} <span className="badge">{stale ? 'unknown' : c.state}</span>
          </h3>
          <dl>
            <dt>runs on</dt>
            <dd>{c.where}</dd>
            <dt>running</dt>
            <dd>{c.running}</dd>
            <dt title="requests routed to it since the model was loaded">routed</dt>
            <dd data-testid={`routed-${c.replica}`}>{c.routed}</dd>
            <dt>slots</dt>
            <dd>{c.slots}</dd>
            {c.sizes && (
              <>
                <dt>context</dt>
                <dd data-testid={`context-${c.replica}`}>{c.sizes.context}</dd>
                <dt>KV type</dt>
                <dd>{c.sizes.kvType}</dd>
                <dt>GPU layers</dt>
                <dd>{c.sizes.gpuLayers}</dd>
              </>
            )}
            <dt>cache hits</dt>
            <dd>{c.hitPercent}%</dd>
            {c.latency === null ? (
              <>
                <dt>pid</dt>
                <dd>{c.pid ?? '—'}</dd>
              </>
            ) : (
              <>
                <dt>latency</dt>
                <dd>{c.latency}</dd>
              </>
            )}
          </dl>
          {c.reEvaluation && (
            <p className="note" data-testid={`re-evaluation-${c.replica}`}>
              <progress max={c.reEvaluation.total} value={c.reEvaluation.done} /> {c.reEvaluation.label}
            </p>
          )}
          {c.latchReason && <p className="error">{c.latchReason}</p>}
        </article>
      ))}
    </section>
  );
}
