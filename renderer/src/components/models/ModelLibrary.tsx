/**
 * The Models page's library: a Hugging Face URI box with Download (a progress bar with bytes, speed and
 * ETA, and Cancel), and the models folder as a table (metadata, the loaded one marked, its suggested
 * layout) with Load (the suggested layout, one click), Unload and Delete; replacing a serving model asks first.
 */
import { useEffect } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { formatBytes } from '../../../../common/format-bytes.js';
import { describeProgress } from '../../../../common/model-download.js';
import { HubSearch } from './HubSearch.js';
import type { LibraryEntry } from '../../../../common/model-library.js';
import { useApp } from '../../store/use-app-store.js';

/** Asks before a load replaces the model serving; true when nothing serves or the user agrees. */
export function confirmReplace(serving: string | undefined, next: string): boolean {
  return !serving || window.confirm(`${serving} is loaded and serving. Replace it with ${next.split(/[\\/]/).at(-1)}?`);
}

export function ModelLibrary() {
  const { library, downloadUri, downloads, libraryError, serving, loading } = useApp(
    useShallow((s) => ({
      library: s.library,
      downloadUri: s.downloadUri,
      downloads: s.downloads,
      libraryError: s.libraryError,
      serving: s.info?.model,
      loading: s.loading,
    })),
  );
  const a = useApp(
    useShallow((s) => ({
      setUri: s.setDownloadUri,
      download: s.startDownload,
      cancel: s.cancelDownload,
      refresh: s.refreshLibrary,
      remove: s.deleteModel,
      unload: s.unloadModel,
      use: s.useSuggested,
      load: s.loadModel,
    })),
  );
  useEffect(() => void a.refresh(), [a]);
  const running = Object.values(downloads).filter((d) => d.state === 'resolving' || d.state === 'downloading' || d.state === 'checking');
  const ended = Object.values(downloads).filter((d) => d.state === 'failed');

  const loadSuggested = (entry: LibraryEntry): void => {
    if (!confirmReplace(serving, entry.path)) return;
    a.use(entry);
    void a.load({ replace: Boolean(serving) });
  };

  return (
    <section className="panel" aria-label="model library">
      <h2>Library</h2>
      <HubSearch />
      <div className="form-row">
        <label className="grow">
          Download from Hugging Face
          <input
            aria-label="model URI"
            value={downloadUri}
            placeholder="hf:owner/repo/file.gguf, hf:owner/repo:Q4_K_M or https://…"
            onChange={(e) => a.setUri(e.target.value)}
          />
        </label>
        <button className="primary" onClick={() => void a.download()} disabled={!downloadUri.trim()}>
          Download
        </button>
      </div>
      {running.map((d) => (
        <div key={d.uri} className="progress" aria-label="download progress">
          <progress max={d.totalBytes || 1} value={d.downloadedBytes} />
          <span>
            {d.file ?? d.uri} · {d.state === 'downloading' ? describeProgress(d) : d.state}
          </span>
          <button onClick={() => void a.cancel(d.uri)}>Cancel</button>
        </div>
      ))}
      {ended.map((d) => (
        <p key={d.uri} className="error" data-testid="download-failed">
          {d.error}{' '}
          <button className="link" onClick={() => void a.cancel(d.uri)}>
            Dismiss
          </button>
        </p>
      ))}
      {libraryError && (
        <p className="error" role="alert">
          {libraryError}
        </p>
      )}
      {library && (
        <table className="library" aria-label="models">
          <thead>
            <tr>
              <th>Model</th>
              <th>Architecture</th>
              <th>Parameters</th>
              <th>Quantisation</th>
              <th>Size</th>
              <th>Context</th>
              <th>Suggested layout</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {library.models.length === 0 && (
              <tr>
                <td colSpan={8}>No models in {library.modelsDir ?? 'a models folder'} yet: download one above.</td>
              </tr>
            )}
            {library.models.map((m) => (
              <tr key={m.path} className={m.loaded ? 'loaded' : undefined} aria-label={m.file}>
                <td>
                  {m.file} {m.loaded && <strong className="ok">● loaded</strong>}
                  {m.error && <div className="error">{m.error}</div>}
                </td>
                <td>{m.architecture ?? '—'}</td>
                <td>{m.parameters === null ? '—' : `${(m.parameters / 1e6).toFixed(1)} M`}</td>
                <td>{m.quantisation ?? '—'}</td>
                <td>{formatBytes(m.bytes)}</td>
                <td>{m.contextLength ?? '—'}</td>
                <td title={m.suggested?.reason}>
                  {m.suggested ? `${m.suggested.replicas} × ${m.suggested.contextSize} ctx × ${m.suggested.slots} slots (${m.suggested.device})` : '—'}
                </td>
                <td className="actions">
                  {m.loaded ? (
                    <button aria-label={`Unload ${m.file}`} onClick={() => void a.unload()}>
                      Unload
                    </button>
                  ) : (
                    <button className="primary" aria-label={`Load ${m.file}`} disabled={loading || m.error !== null} onClick={() => loadSuggested(m)}>
                      Load
                    </button>
                  )}
                  <button
                    aria-label={`Delete ${m.file}`}
                    disabled={m.loaded}
                    title={m.loaded ? 'unload it first' : undefined}
                    onClick={() => window.confirm(`Delete ${m.file}?`) && void a.remove(m.path)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
