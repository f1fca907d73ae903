/** Live resize: context size, slots, GPU layers for one replica or all; pre-check first, then apply, progress and outcomes. */
import { useShallow } from 'zustand/react/shallow';
import { describeOutcome, selectApplyHint, selectResizeProgress } from '../../store/resize-slice.js';
import { useApp } from '../../store/use-app-store.js';

export function ResizePanel() {
  const { resizeForm: form, verdicts, stages, outcomes, resizeBusy, resizeError } = useApp(
    useShallow((s) => ({ resizeForm: s.resizeForm, verdicts: s.verdicts, stages: s.stages, outcomes: s.outcomes, resizeBusy: s.resizeBusy, resizeError: s.resizeError })),
  );
  const replicas = useApp((s) => s.replicas.length);
  const applyHint = useApp(selectApplyHint);
  const { setResizeForm, precheckResize, applyResize } = useApp(useShallow((s) => ({ setResizeForm: s.setResizeForm, precheckResize: s.precheckResize, applyResize: s.applyResize })));
  return (
    <section className="panel" aria-label="resize">
      <h2>Resize (live)</h2>
      <div className="form-row">
        <label>
          Replica
          <select value={String(form.replica)} onChange={(e) => setResizeForm({ replica: e.target.value === 'all' ? 'all' : Number(e.target.value) })}>
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
          <input value={form.contextSize} placeholder="unchanged" inputMode="numeric" onChange={(e) => setResizeForm({ contextSize: e.target.value })} />
        </label>
        <label>
          Slots
          <input value={form.slots} placeholder="unchanged" inputMode="numeric" onChange={(e) => setResizeForm({ slots: e.target.value })} />
        </label>
        <label>
          GPU layers
          <input value={form.gpuLayers} placeholder="unchanged" onChange={(e) => setResizeForm({ gpuLayers: e.target.value })} />
        </label>
        <button onClick={() => void precheckResize()} disabled={resizeBusy}>
          Check
        </button>
        <button className="primary" onClick={() => void applyResize()} disabled={applyHint !== null} title={applyHint ?? 'Resize now, keeping the prefixes that fit'} aria-describedby="apply-hint">
          Apply
        </button>
      </div>
      {applyHint && !resizeBusy && (
        <p className="note" id="apply-hint" data-testid="apply-hint">
          {applyHint}
        </p>
      )}
      {resizeError && <p className="error">{resizeError}</p>}
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
      {resizeBusy && Object.keys(stages).length > 0 && (
        <p className="note" aria-label="resize progress">
          <progress max={1} value={selectResizeProgress({ stages, resizeForm: form }, replicas)} />{' '}
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
