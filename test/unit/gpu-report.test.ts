/** The GPU report's three sources, pure: NVML's cards with their replicas, the engines' VRAM, or "no GPU". */
import { describe, expect, it } from 'vitest';
import { describeCard, gpuReport, type EngineGpuState } from '../../core/gpu/gpu-report.js';
import type { NvmlCard } from '../../native/nvml.js';

const GiB = 1024 ** 3;
const card = (index: number, used: number): NvmlCard => ({
  index,
  name: `NVIDIA H200 #${index}`,
  memoryUsedBytes: used * GiB,
  memoryTotalBytes: 141 * GiB,
  utilizationPercent: 50 + index,
  temperatureC: 40,
  powerW: null,
});
const cpuEngines: EngineGpuState[] = [
  { replica: 0, gpus: [], backend: 'cpu', vram: { total: 0, used: 0 } },
  { replica: 1, gpus: [], backend: null, vram: null },
];

describe('gpuReport', () => {
  it('lists NVML cards with the replica using each', () => {
    const engines: EngineGpuState[] = [
      { replica: 0, gpus: [0, 1], backend: 'cuda', vram: null },
      { replica: 1, gpus: [2], backend: 'cuda', vram: null },
    ];
    const report = gpuReport([card(0, 10), card(1, 11), card(2, 12), card(3, 0)], engines, 'NVML');
    expect(report.source).toBe('nvml');
    expect(report.cards.map((c) => [c.card, c.replica])).toEqual([
      [0, 0],
      [1, 0],
      [2, 1],
      [3, null],
    ]);
    expect(report.cards[2]).toMatchObject({ memoryUsedBytes: 12 * GiB, utilizationPercent: 52, powerW: null });
    expect(report.note).toBe('NVML: 4 cards');
  });

  it("falls back to the engines' own VRAM state without NVML", () => {
    const report = gpuReport(
      null,
      [{ replica: 1, gpus: [0], backend: 'vulkan', vram: { total: 24 * GiB, used: 3 * GiB } }, ...cpuEngines],
      'NVML (libnvidia-ml.so.1) is not on this machine',
    );
    expect(report.source).toBe('engines');
    expect(report.cards).toEqual([
      {
        card: null,
        name: 'replica 1 (vulkan, cards 0)',
        memoryUsedBytes: 3 * GiB,
        memoryTotalBytes: 24 * GiB,
        utilizationPercent: null,
        temperatureC: null,
        powerW: null,
        replica: 1,
      },
    ]);
    expect(report.note).toMatch(/not on this machine; memory as the engines report it/);
  });

  it('says "no GPU" cleanly with neither', () => {
    const report = gpuReport(null, cpuEngines, 'NVML (libnvidia-ml.so.1) is not on this machine');
    expect(report).toEqual({ source: 'none', cards: [], note: 'no GPU: NVML (libnvidia-ml.so.1) is not on this machine, and no engine runs on a GPU' });
    expect(gpuReport([], [], 'NVML').source).toBe('none');
  });

  it('describes a card in one line', () => {
    const [one] = gpuReport([{ ...card(0, 6), powerW: 412.5 }], [{ replica: 0, gpus: [0], backend: 'cuda', vram: null }], 'NVML').cards;
    expect(describeCard(one!)).toBe('card 0: NVIDIA H200 #0: memory 6.0 GiB / 141.0 GiB used, utilisation 50%, 40 °C, 412.5 W, replica 0');
  });
});
