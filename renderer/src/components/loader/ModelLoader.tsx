/** The model loader: pick a GGUF, see its metadata and whether it fits, choose the layout, load with progress. */
import { useEffect, useMemo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { formatBytes } from '../../../../common/format-bytes.js';
import { selectLoadProgress } from '../../store/loader-slice.js';
import { useApp } from '../../store/use-app-store.js';
import { confirmReplace, ModelLibrary } from '../models/ModelLibrary.js';

export function ModelLoader() {
  const { modelPath, plan, inspection, sources, loading, loaderError } = useApp(
    useShallow((s) => ({ modelPath: s.modelPath, plan: s.plan, inspection: s.inspection, sources: s.sources, loading: s.loading, loaderError: s.loaderError })),
  );
  const loadSteps = useApp((s) => s.loadSteps);
  const serving = useApp((s) => s.info?.model);
  const progress = useMemo(() => selectLoadProgress({ loadSteps }), [loadSteps]);
  const a = useApp(
    useShallow((s) => ({
      setPath: s.setModelPath,
      setPlan: s.setPlan,
      refresh: s.refreshSources,
      pick: s.pickModelFile,
      inspect: s.inspectModel,
      load: s.loadModel,
    })),
  );
  useEffect(() => void a.refresh(), [a]);
  const choose = (path: string): void => a.setPath(path);

  return (
    <div className="loader">
      <ModelLibrary />
      <section className="panel">
        <h2>Model</h2>
        <div className="form-row">
          <label className="grow">
            GGUF file
            <input aria-label="model path" value={modelPath} placeholder="/path/to/model.gguf" onChange={(e) => a.setPath(e.target.value)} />
          </label>
          <button onClick={() => void a.pick()}>Browse…</button>
          <button onClick={() => void a.inspect()}>Inspect</button>
        </div>
        {sources && (sources.recent.length > 0 || sources.found.length > 0) && (
          <div className="sources">
            {sources.recent.length > 0 && (
              <p>
                Recent:{' '}
                {sources.recent.map((p) => (
                  <button key={p} className="link" onClick={() => choose(p)} title={p}>
                    {recentName(p, sources.recent)}
                  </button>
                ))}
              </p>
            )}
            {sources.found.length > 0 && (
              <p>
                In {sources.modelsDir}:{' '}
                {sources.found.map((f) => (
                  <button key={f.path} className="link" onClick={() => choose(f.path)}>
                    {f.path.split(/[\\/]/).at(-1)} ({formatBytes(f.bytes)})
                  </button>
                ))}
              </p>
            )}
          </div>
        )}
      </section>

      <section className="panel">
        <h2>Layout</h2>
        <div className="form-row">
          <label>
            Replicas
            <input
              aria-label="replicas"
              type="number"
              min={1}
              max={64}
              value={plan.replicas}
              onChange={(e) => a.setPlan({ replicas: Math.max(1, Number(e.target.value) || 1) })}
            />
          </label>
          <label>
            Cards
            <select aria-label="cards" value={plan.device} onChange={(e) => a.setPlan({ device: e.target.value as 'auto' | 'cpu' | 'cards' })}>
              <option value="auto">detected GPUs (else CPU)</option>
              <option value="cards">these cards…</option>
              <option value="cpu">CPU only</option>
            </select>
          </label>
          {plan.device === 'cards' && (
            <label>
              Card list (split into equal groups)
              <input aria-label="card list" value={plan.cards} placeholder="0,1,2,3" onChange={(e) => a.setPlan({ cards: e.target.value })} />
            </label>
          )}
          <label>
            Context per slot
            <input
              aria-label="context size"
              type="number"
              min={64}
              step={256}
              value={plan.contextSize}
              onChange={(e) => a.setPlan({ contextSize: Math.max(64, Number(e.target.value) || 64) })}
            />
          </label>
          <label>
            Slots per replica
            <input
              aria-label="slots"
              type="number"
              min={1}
              max={256}
              value={plan.slots}
              onChange={(e) => a.setPlan({ slots: Math.max(1, Number(e.target.value) || 1) })}
            />
          </label>
          <label className="check">
            <input type="checkbox" checked={plan.sharedArena} onChange={(e) => a.setPlan({ sharedArena: e.target.checked })} /> Shared arena
          </label>
          <button
            className="primary"
            onClick={() => confirmReplace(serving, modelPath) && void a.load({ replace: Boolean(serving) })}
            disabled={loading || !modelPath.trim()}
          >
            {loading ? 'Loading…' : 'Load'}
          </button>
        </div>
        {progress && (
          <div className="progress" aria-label="load progress">
            <progress max={1} value={progress.fraction} />
            <span>{progress.label}</span>
          </div>
        )}
        {loaderError && (
          <p className="error" role="alert">
            {loaderError}
          </p>
        )}
      </section>

      {inspection && (
        <section className="panel" aria-label="model info">
          <h2>{inspection.name ?? inspection.path.split(/[\\/]/).at(-1)}</h2>
          <dl className="facts">
            <dt>architecture</dt>
            <dd>{inspection.architecture ?? 'unknown'}</dd>
            <dt>parameters</dt>
            <dd>{(inspection.parameters / 1e6).toFixed(1)} M</dd>
            <dt>quantisation</dt>
            <dd>{inspection.quantisation}</dd>
            <dt>context length</dt>
            <dd>{inspection.contextLength ?? 'unknown'}</dd>
            <dt>layers</dt>
            <dd>{inspection.layers ?? 'unknown'}</dd>
            <dt>size</dt>
            <dd>{formatBytes(inspection.fileBytes)}</dd>
          </dl>
          <ul className="fits">
            {inspection.fits.map((f) => (
              <li key={f.group} className={f.fits ? 'ok' : 'error'}>
                {f.group}: {f.fits ? 'fits' : 'does not fit'} — needs {formatBytes(f.needBytes)}, {formatBytes(f.freeBytes)} free
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}

/** A recent model's file name, with its folder where another recent model has the same name. */
export function recentName(path: string, recent: readonly string[]): string {
  const parts = path.split(/[\\/]/);
  const name = parts.at(-1)!;
  const clash = recent.some((other) => other !== path && other.split(/[\\/]/).at(-1) === name);
  return clash ? `${name} (${parts.slice(0, -1).join('/') || '/'})` : name;
}
