/**
 * The GPU figures the dashboard, the control API's events, `/metrics` and `npm run gpu-info` show, from
 * one place: NVML when its library is on the machine (each card, with the replica using it), else the
 * engines' own VRAM state (one entry per GPU replica), else "no GPU". A missing NVML is never an error.
 */
import type { GpuCard, GpuReport } from '../../common/contract.js';
import { formatBytes } from '../../common/format-bytes.js';
import { defaultNvmlLibrary, openNvml, type NvmlCard, type NvmlSession } from '../../native/nvml.js';

/** What a replica's engine says of its GPU memory (its last load or rebuild). */
export interface EngineGpuState {
  replica: number;
  gpus: readonly number[];
  backend: string | null;
  vram: { total: number; used: number } | null;
}

/** The report from NVML's cards (null: no NVML) and the engines' states. Pure. */
export function gpuReport(nvmlCards: readonly NvmlCard[] | null, engines: readonly EngineGpuState[], nvmlNote: string): GpuReport {
  if (nvmlCards && nvmlCards.length > 0) {
    const owner = (card: number): number | null => engines.find((e) => e.gpus.includes(card))?.replica ?? null;
    return {
      source: 'nvml',
      cards: nvmlCards.map((c) => ({ ...c, card: c.index, replica: owner(c.index) })).map(({ index: _index, ...card }) => card),
      note: `NVML: ${nvmlCards.length} card${nvmlCards.length === 1 ? '' : 's'}`,
    };
  }
  const onGpu = engines.filter((e) => e.backend !== null && e.backend !== 'cpu' && e.vram !== null && e.vram.total > 0);
  if (onGpu.length > 0) {
    return {
      source: 'engines',
      cards: onGpu.map((e): GpuCard => ({
        card: null,
        name: `replica ${e.replica} (${e.backend}${e.gpus.length ? `, cards ${e.gpus.join(',')}` : ''})`,
        memoryUsedBytes: e.vram!.used,
        memoryTotalBytes: e.vram!.total,
        utilizationPercent: null,
        temperatureC: null,
        powerW: null,
        replica: e.replica,
      })),
      note: `${nvmlNote}; memory as the engines report it`,
    };
  }
  return { source: 'none', cards: [], note: `no GPU: ${nvmlNote}, and no engine runs on a GPU` };
}

/** One card as a line for people (the gpu-info CLI and logs). */
export function describeCard(card: GpuCard): string {
  const figures = [
    `memory ${formatBytes(card.memoryUsedBytes)} / ${formatBytes(card.memoryTotalBytes)} used`,
    card.utilizationPercent === null ? 'utilisation n/a' : `utilisation ${card.utilizationPercent}%`,
    ...(card.temperatureC === null ? [] : [`${card.temperatureC} °C`]),
    ...(card.powerW === null ? [] : [`${card.powerW.toFixed(1)} W`]),
    ...(card.replica === null ? [] : [`replica ${card.replica}`]),
  ];
  return `${card.card === null ? '' : `card ${card.card}: `}${card.name}: ${figures.join(', ')}`;
}

/** Holds NVML open for the workstation's life (opening it once per sample would cost ~100 ms). */
export class GpuMonitor {
  private session: NvmlSession | null | undefined;
  private note = '';

  constructor(private readonly libraryPath: string = process.env.MANIFOLD_NVML_LIBRARY ?? defaultNvmlLibrary()) {}

  private nvml(): NvmlSession | null {
    if (this.session !== undefined) return this.session;
    try {
      this.session = openNvml(this.libraryPath);
      this.note = this.session ? 'NVML' : `NVML (${this.libraryPath}) is not on this machine`;
    } catch (error) {
      this.session = null;
      this.note = `NVML did not start (${(error as Error).message})`;
    }
    return this.session;
  }

  /** NVML's cards now, or null without NVML (or when a read fails: the note says why). */
  nvmlCards(): NvmlCard[] | null {
    const session = this.nvml();
    if (!session) return null;
    try {
      return session.cards();
    } catch (error) {
      this.note = `NVML failed to read the cards (${(error as Error).message})`;
      return null;
    }
  }

  report(engines: readonly EngineGpuState[] = []): GpuReport {
    const cards = this.nvmlCards();
    return gpuReport(cards, engines, this.note);
  }

  /** The card numbers NVML sees (the config's default card list); empty without NVML. */
  detectedCards(): number[] {
    return (this.nvmlCards() ?? []).map((c) => c.index);
  }

  close(): void {
    this.session?.close();
    this.session = undefined;
  }
}
