/**
 * GPU figures end to end. Without NVML (this machine) the dashboard data, its event and /metrics say
 * "no GPU" cleanly and `npm run gpu-info` says so too. With NVML present — here a stand-in library with
 * two cards built from test/fixtures/nvml-double.c, since no NVIDIA driver is here — the same code reads
 * each card's name, memory and utilisation through koffi, for the CLI, the contract and /metrics.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterEach, describe, expect, it } from 'vitest';
import { openControl } from '../helpers/control.js';
import { waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';

const gpuInfo = (env: Record<string, string> = {}): string => {
  const run = spawnSync(process.execPath, [join('node_modules', 'tsx', 'dist', 'cli.mjs'), 'cli/gpu-info.ts'], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
};

const gpuSamples = (metrics: string, name: string) => parsePrometheusTextFormat(metrics).find((f) => f.name === name)?.metrics ?? [];

afterEach(() => {
  delete process.env.MANIFOLD_NVML_LIBRARY;
});

describe('without NVML', () => {
  it('the dashboard data, its event, /metrics and gpu-info all say "no GPU"', async () => {
    const served = await startServed({ replicas: 1 }, { front: { eventIntervalMs: 100 } });
    const control = await openControl(served.front);
    const answer = await control.call('getGpus');
    expect(answer).toMatchObject({ ok: true, value: { source: 'none', cards: [] } });
    expect((answer.value as { note: string }).note).toMatch(/^no GPU: NVML \(libnvidia-ml\.so\.1\) is not on this machine, and no engine runs on a GPU$/);
    const event = await waitFor(() => control.events('gpus')[0], 'a gpus event');
    expect(event).toEqual(answer.value);
    control.close();
    const metrics = await (await fetch(`${served.front.url}/metrics`)).text();
    expect(gpuSamples(metrics, 'manifold_gpu_memory_used_bytes')).toEqual([]);
    expect(gpuInfo()).toBe('no GPU: NVML (libnvidia-ml.so.1) is not on this machine, and no engine runs on a GPU\n');
  });
});

const cc = spawnSync('cc', ['--version']).status === 0;
if (!cc) console.log('skipped: the NVML stand-in needs a C compiler (cc); the report logic is unit-tested in gpu-report.test.ts');

describe.skipIf(!cc)('with NVML (a stand-in library of two cards)', () => {
  const built = (): string => {
    const dir = join(process.cwd(), '.cache', 'nvml-double');
    mkdirSync(dir, { recursive: true });
    const library = join(dir, 'libnvidia-ml.so.1');
    const run = spawnSync('cc', ['-shared', '-fPIC', '-o', library, join('test', 'fixtures', 'nvml-double.c')], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    return library;
  };

  it("gpu-info prints each card's name, memory and utilisation", () => {
    expect(gpuInfo({ MANIFOLD_NVML_LIBRARY: built() }).split('\n')).toEqual([
      'NVML: 2 cards',
      'card 0: NVIDIA Double H200: memory 6.0 GiB / 140.4 GiB used, utilisation 87%, 61 °C, 412.5 W',
      'card 1: NVIDIA Double L4: memory 1.0 GiB / 22.5 GiB used, utilisation 3%, 35 °C',
      '',
    ]);
  });

  it('the dashboard data and /metrics carry the same cards', async () => {
    process.env.MANIFOLD_NVML_LIBRARY = built();
    const served = await startServed({ replicas: 1 });
    const control = await openControl(served.front);
    const answer = await control.call('getGpus');
    control.close();
    expect(answer).toMatchObject({ ok: true, value: { source: 'nvml', note: 'NVML: 2 cards' } });
    expect((answer.value as { cards: unknown[] }).cards).toEqual([
      {
        card: 0,
        name: 'NVIDIA Double H200',
        memoryUsedBytes: 6442450945,
        memoryTotalBytes: 150754820096,
        utilizationPercent: 87,
        temperatureC: 61,
        powerW: 412.5,
        replica: null,
      },
      {
        card: 1,
        name: 'NVIDIA Double L4',
        memoryUsedBytes: 1073741824,
        memoryTotalBytes: 24152899584,
        utilizationPercent: 3,
        temperatureC: 35,
        powerW: null,
        replica: null,
      },
    ]);
    const metrics = await (await fetch(`${served.front.url}/metrics`)).text();
    expect(gpuSamples(metrics, 'manifold_gpu_utilization_percent').map((m) => [m.labels?.card, m.value])).toEqual([
      ['0', '87'],
      ['1', '3'],
    ]);
  });
});
