/** The shared arena: what it holds (kind, size, hash) or why there is none, and its RAM warning. */
import { formatBytes } from '../../../../common/format-bytes.js';
import { useApp } from '../../store/use-app-store.js';

export function ArenaPanel() {
  const arena = useApp((s) => s.arena);
  return (
    <section className="panel" aria-label="arena">
      <h2>Arena</h2>
      {!arena ? (
        <p className="note">…</p>
      ) : arena.state === 'ready' ? (
        <p>
          {arena.kind}: {formatBytes(arena.filledBytes)} in RAM once for every replica, sha256 {arena.sha256?.slice(0, 12)}…
        </p>
      ) : (
        <p className="note">
          {arena.state === 'filling' ? `filling: ${formatBytes(arena.filledBytes)} of ${formatBytes(arena.modelBytes)}` : `none: ${arena.reason ?? 'off'}`}
        </p>
      )}
      {arena?.warning && <p className="warning">{arena.warning}</p>}
    </section>
  );
}
