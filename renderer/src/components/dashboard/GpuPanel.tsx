/** GPU memory and utilisation per card (NVML or the engines' own figures); "no GPU" on a CPU machine. */
import { formatBytes } from '../../../../common/format-bytes.js';
import { useApp } from '../../store/use-app-store.js';
import { selectGpuPanel } from '../../store/workstation-slice.js';

export function GpuPanel() {
  const gpus = useApp((s) => s.gpus);
  const { note, cards } = selectGpuPanel({ gpus });
  return (
    <section className="panel" aria-label="GPUs">
      <h2>GPUs</h2>
      <p className="note" data-testid="gpu-note">
        {note}
      </p>
      {cards.map((c) => (
        <div key={`${c.card}-${c.name}`} className="gpu">
          <strong>{c.card === null ? c.name : `${c.card}: ${c.name}`}</strong>
          <meter min={0} max={c.memoryTotalBytes} value={c.memoryUsedBytes} />
          <span>
            {formatBytes(c.memoryUsedBytes)} / {formatBytes(c.memoryTotalBytes)}
            {c.utilizationPercent !== null && ` · ${c.utilizationPercent}% busy`}
            {c.replica !== null && ` · replica ${c.replica}`}
          </span>
        </div>
      ))}
    </section>
  );
}
