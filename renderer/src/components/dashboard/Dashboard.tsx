/** The dashboard: replica cards, charts over time, the slot view, GPUs, the arena, resize controls and logs. */
import { ArenaPanel } from './ArenaPanel.js';
import { Charts } from './Charts.js';
import { GpuPanel } from './GpuPanel.js';
import { LogPanel } from './LogPanel.js';
import { ReplicaCards } from './ReplicaCards.js';
import { RebuildPanel } from './RebuildPanel.js';
import { SlotTable } from './SlotTable.js';

export function Dashboard({ onOpenModels }: { onOpenModels: () => void }) {
  return (
    <div className="dashboard">
      <ReplicaCards onOpenModels={onOpenModels} />
      <Charts />
      <div className="row">
        <SlotTable />
        <div className="column">
          <GpuPanel />
          <ArenaPanel />
        </div>
      </div>
      <RebuildPanel />
      <LogPanel />
    </div>
  );
}
