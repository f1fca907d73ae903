/** The slot view's second table: what each replica's prefix cache keeps of evicted conversations, per tier (RAM, disk). */
import { useMemo } from 'react';
import { formatBytes } from '../../../../common/format-bytes.js';
import { useApp } from '../../store/use-app-store.js';
import { selectPrefixTierRows } from '../../store/workstation-slice.js';

export function PrefixTierTable({ titles }: { titles: ReadonlyMap<string, string> }) {
  const replicas = useApp((s) => s.replicas);
  const rows = useMemo(() => selectPrefixTierRows({ replicas }, titles), [replicas, titles]);
  if (!rows.length) return null;
  return (
    <>
      <h2 className="subhead">Prefix cache of evicted conversations</h2>
      <table aria-label="prefix cache">
        <thead>
          <tr>
            <th>replica</th>
            <th>tier</th>
            <th>entries</th>
            <th>bytes / budget</th>
            <th>newest saved (conversation · tokens)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} data-testid={`tier-${r.replica}-${r.tier}`}>
              <td>{r.replica}</td>
              <td>{r.tier}</td>
              <td data-testid="tier-entries">{r.entries}</td>
              <td>
                {formatBytes(r.bytes)} / {formatBytes(r.budgetBytes)}
              </td>
              <td>{r.saved.length ? `${r.saved.map((e) => `${e.conversation} · ${e.tokens}`).join(', ')}${r.more ? `, and ${r.more} more` : ''}` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
