/** Live resize: context size, slots, GPU layers for one replica or all; pre-check first, then apply, progress and outcomes. */
import { useShallow } from 'zustand/react/shallow';
import { describeOutcome, selectApplyHint, selectRebuildProgress } from '../../store/rebuild-slice.js';
import { useApp } from '../../store/use-app-store.js';

export function RebuildPanel() {
  const {
    rebuildForm: form,
    verdicts,
    stages,
    outcomes,
    rebuildBusy,
    rebuildError,
  } = useApp(
    useShallow((s) => ({
      rebuildForm: s.rebuildForm,
      verdicts: s.verdicts,
      stages: s.stages,
      outcomes: s.outcomes,
      rebuildBusy: s.rebuildBusy,
      rebuildError: s.rebuildError,
    })),
  );
  const replicas = useApp((s) => s.replicas.length);
  const applyHint = useApp(selectApplyHint);
  const { setRebuildForm, precheckRebuild, applyRebuild } = useApp(
    useShallow((s) => ({ setRebuildForm: s.setRebuildForm, precheckRebuild: s.precheckRebuild, applyRebuild: s.applyRebuild })),
  );
  return (
    <section className="panel" aria-label="resize">
      <h2>Resize (live)</h2>
      <div className="form-row">
        <label>
          Replica
          <select value={String(form.replica)} onChange={(e) => setRebuildForm({ replica: e.target.value === 'all' ? 'all' : Number(e.target.value) })}>
            <option value="all">all (rolling)</option>
            {Array.from({ length: replicas }, (_, i) => (
              <option key={i} value={i}>
                replica {i}
              </option>
            ))}
          </select>
        </label>
        <label>
          Context size
          <input value={form.contextSize} placeholder="unchanged" inputMode="numeric" onChange={(e) => setRebuildForm({ contextSize: e.target.value })} />
        </label>
        <label>
          Slots
          <input value={form.slots} placeholder="unchanged" inputMode="numeric" onChange={(e) => setRebuildForm({ slots: e.target.value })} />
        </label>
        <label>
          GPU layers
          <input value={form.gpuLayers} placeholder="unchanged" onChange={(e) => setRebuildForm({ gpuLayers: e.target.value })} />
        </label>
        <button onClick={() => void precheckRebuild()} disabled={rebuildBusy}>
          Check
        </button>
        <button
          className="primary"
          onClick={() => void applyRebuild()}
          disabled={applyHint !== null}
          title={applyHint ?? 'Resize now, keeping the prefixes that fit'}
          aria-describedby="apply-hint"
        >
          Apply
        </button>
      </div>
      {applyHint && !rebuildBusy && (
        <p className="note" id="apply-hint" data-testid="apply-hint">
          {applyHint}
        </p>
      )}
      {rebuildError && <p className="error">{rebuildError}</p>}
      {verdicts && (
        <ul className="verdicts" aria-label="pre-check">
          {verdicts.map((v) => (
            <li key={v.replica} className={v.fits ? 'ok' : 'error'}>
              replica {v.replica}: {/^(fits|does not fit)\b/.test(v.reason) ? v.reason : `${v.fits ? 'fits' : 'does not fit'} — ${v.reason}`}
              {v.warning && <span className="warn"> (warning: {v.warning})</span>}
            </li>
          ))}
        </ul>
      )}
      {rebuildBusy && Object.keys(stages).length > 0 && (
        <p className="note" aria-label="resize progress">
          <progress max={1} value={selectRebuildProgress({ stages, rebuildForm: form }, replicas)} />{' '}
          {Object.entries(stages)
            .map(([replica, stage]) => `replica ${replica}: ${stage}`)
            .join(' · ')}
        </p>
      )}
      {outcomes && (
        <ul className="outcomes" aria-label="outcomes">
          {outcomes.map((o) => (
            <li key={o.replica} className={o.outcome === 'Applied' ? 'ok' : 'error'}>
              {describeOutcome(o)}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
