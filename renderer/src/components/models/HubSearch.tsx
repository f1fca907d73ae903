/** Finding a model on the Hugging Face Hub: GGUF repositories by words, then a repository's files with their sizes, each a click from downloading. */
import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { formatBytes } from '../../../../common/format-bytes.js';
import { useApp } from '../../store/use-app-store.js';

export function HubSearch() {
  const [query, setQuery] = useState('');
  const { results, repo, error } = useApp(useShallow((s) => ({ results: s.hubResults, repo: s.hubRepo, error: s.hubError })));
  const a = useApp(useShallow((s) => ({ search: s.searchHub, open: s.openHubRepo, download: s.downloadHubFile })));
  return (
    <div className="hub-search" aria-label="hub search">
      <form
        className="form-row"
        onSubmit={(e) => {
          e.preventDefault();
          if (query.trim()) void a.search(query.trim());
        }}
      >
        <label className="grow">
          Find on the Hub
          <input aria-label="hub search words" value={query} placeholder="qwen, llama 3.1 8b, gemma…" onChange={(e) => setQuery(e.target.value)} />
        </label>
        <button type="submit" disabled={!query.trim()}>
          Search
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {results && results.length === 0 && <p className="note">No GGUF repository matches.</p>}
      {results && results.length > 0 && (
        <ul className="hub-results" aria-label="hub results">
          {results.map((m) => (
            <li key={m.id}>
              <button className="link" onClick={() => void a.open(m.id)} aria-expanded={repo?.id === m.id}>
                {m.id}
              </button>{' '}
              <span className="note">{m.downloads.toLocaleString()} downloads</span>
              {repo?.id === m.id && (
                <table aria-label={`files of ${m.id}`}>
                  <tbody>
                    {repo.files.map((f) => (
                      <tr key={f.path}>
                        <td>{f.path}</td>
                        <td>{formatBytes(f.bytes)}</td>
                        <td>
                          <button onClick={() => void a.download(f.uri)}>Download</button>
                        </td>
                      </tr>
                    ))}
                    {repo.files.length === 0 && (
                      <tr>
                        <td colSpan={3}>No GGUF file in this repository.</td>
                      </tr>
                    )}
                  </tbody>
                </table>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
