/**
 * The slot view: every replica's slots, numbered globally, with state, held tokens and conversation (its chat title where the window has it); under
 * them, its prefix cache's tiers.
 */
import { useMemo } from 'react';
import { useApp } from '../../store/use-app-store.js';
import { selectSlotRows } from '../../store/workstation-slice.js';
import { PrefixTierTable } from './PrefixTierTable.js';

export function SlotTable() {
  const slots = useApp((s) => s.slots);
  const conversations = useApp((s) => s.conversations);
  const titles = useMemo(() => new Map(conversations.map((c) => [c.id, c.title])), [conversations]);
  const rows = useMemo(() => selectSlotRows({ slots }, titles), [slots, titles]);
  return (
    <section className="panel grow">
      <h2>Slots</h2>
      <table aria-label="slots">
        <thead>
          <tr>
            <th>slot</th>
            <th>replica</th>
            <th>state</th>
            <th>held tokens</th>
            <th>conversation</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key} className={`slot-${r.state}`}>
              <td>{r.slot}</td>
              <td>{r.replica}</td>
              <td>{r.state}</td>
              <td>{r.heldTokens}</td>
              <td>{r.conversation}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <PrefixTierTable titles={titles} />
    </section>
  );
}
