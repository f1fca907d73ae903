/** Run config rules (DESIGN §3), each with its documented message. */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseRunConfig, planReplicas, type RunConfig } from '../../electron/core/config/run-config.js';

const gpuMachine = { detectedGpus: [0, 1, 2, 3], cpuCores: 16 };
const cpuMachine = { detectedGpus: [], cpuCores: 8 };
const plan = (config: Omit<RunConfig, 'model'>, machine = gpuMachine) => planReplicas(parseRunConfig({ model: 'm.gguf', ...config }), machine);
const planError = (config: Record<string, unknown>, machine = gpuMachine): string => {
  try {
    planReplicas(parseRunConfig({ model: 'm.gguf', ...config }), machine);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('run config', () => {
  it('cuts the gpu list into equal groups in order, each seeing only its cards', () => {
    const plans = plan({ gpu: [0, 1, 2, 3], replicas: 2 });
    expect(plans.map((p) => p.gpus)).toEqual([[0, 1], [2, 3]]);
    expect(plans[1]!.env).toMatchObject({ CUDA_VISIBLE_DEVICES: '2,3', HIP_VISIBLE_DEVICES: '2,3', GGML_VK_VISIBLE_DEVICES: '2,3' });
  });

  it('uses the detected cards when there is no gpu list, and one engine for a count of 1 or less', () => {
    expect(plan({ replicas: 4 }).map((p) => p.gpus)).toEqual([[0], [1], [2], [3]]);
    expect(plan({ replicas: 0 }).map((p) => p.gpus)).toEqual([[0, 1, 2, 3]]);
    expect(plan({}).map((p) => p.gpus)).toEqual([[0, 1, 2, 3]]);
  });

  it('refuses a count that does not divide the cards, and says how to fix it', () => {
    expect(planError({ gpu: [0, 1, 2, 3], replicas: 3 })).toBe(
      'replicas: 3 replicas cannot split the 4 cards [0, 1, 2, 3] into equal groups; use a count that divides 4 (1, 2, 4), or name the groups: "replicas": [{"gpus": [..]}, {"gpus": [..]}]',
    );
  });

  it('makes N CPU engines with a share of the cores each when there is no GPU or gpu is "cpu"', () => {
    const plans = plan({ replicas: 2 }, cpuMachine);
    expect(plans).toHaveLength(2);
    expect(plans.every((p) => p.cpu && p.gpus.length === 0 && p.engine.gpuLayers === 0 && p.engine.threads === 4)).toBe(true);
    expect(plans[0]!.env.CUDA_VISIBLE_DEVICES).toBe('');
    expect(plan({ gpu: 'cpu', replicas: 3 }).map((p) => p.engine.threads)).toEqual([5, 5, 5]);
    // An explicit thread count wins over the share.
    expect(plan({ gpu: 'cpu', replicas: 2, engine: { threads: 1 } }).map((p) => p.engine.threads)).toEqual([1, 1]);
  });

  it('takes named groups with their own env and engine options merged over the base', () => {
    const plans = plan({
      replicas: [{ gpus: [0, 1] }, { gpus: [2, 3], env: { A: '1' }, args: { contextSize: 8192 } }],
      engine: { contextSize: 4096, slots: 4 },
      env: { A: '0', B: '2' },
    });
    expect(plans[0]!.engine).toEqual({ contextSize: 4096, slots: 4 });
    expect(plans[1]!.engine).toEqual({ contextSize: 8192, slots: 4 });
    expect(plans[1]!.env).toMatchObject({ A: '1', B: '2', CUDA_VISIBLE_DEVICES: '2,3' });
  });

  it('refuses a group without cards, a card in two groups, and cards that are not numbers', () => {
    expect(planError({ replicas: [{ gpus: [0] }, {}] })).toBe('replicas[1]: every group needs cards, e.g. {"gpus": [0, 1]}');
    expect(planError({ replicas: [{ gpus: [0] }, { gpus: [] }] })).toBe('replicas[1]: every group needs cards, e.g. {"gpus": [0, 1]}');
    expect(planError({ replicas: [{ gpus: [0, 1] }, { gpus: [1, 2] }] })).toBe('replicas: card 1 is in replica 0 and replica 1; each card may serve one replica');
    expect(planError({ replicas: [{ gpus: [0] }, { gpus: ['a'] }] })).toBe(
      'replicas[1].gpus: card "a" is not a card number (cards are whole numbers such as 0, 1, 2)',
    );
    expect(planError({ gpu: [0, 1.5] })).toBe('gpu: card 1.5 is not a card number (cards are whole numbers such as 0, 1, 2)');
    expect(planError({ replicas: [] })).toMatch(/^replicas: the list of groups is empty/);
    expect(planError({ gpu: [], replicas: 2 })).toMatch(/^gpu: the card list is empty/);
  });

  it('treats fewer than two named groups as a single engine on that group', () => {
    const plans = plan({ replicas: [{ gpus: [2, 3], args: { slots: 2 } }], log: '/tmp/m.log' });
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatchObject({ gpus: [2, 3], engine: { slots: 2 }, logFile: '/tmp/m.log' });
  });

  it('gives each replica its own log file <log>.r<i>', () => {
    expect(plan({ replicas: 2, log: '/var/log/m.log' }).map((p) => p.logFile)).toEqual(['/var/log/m.log.r0', '/var/log/m.log.r1']);
  });

  it('names the bad field of a malformed config', () => {
    expect(() => parseRunConfig({ model: 'm', replicas: 'two' })).toThrow(/^config replicas: /);
    expect(() => parseRunConfig({ model: 'm', engine: { slots: 0 } })).toThrow(/^config engine\.slots: /);
    expect(() => parseRunConfig({ model: 'm', surprise: true })).toThrow(ConfigError);
    expect(() => parseRunConfig({})).toThrow(/^config model: /);
    // In words: the field, the value's problem and the limit.
    expect(() => parseRunConfig({ model: 'm', engine: { slots: 300 } })).toThrow('config engine.slots: at most 256 (got 300)');
    expect(() => parseRunConfig({ model: 'm', gpu: 'gpu' })).toThrow('config gpu: expected "cpu" or an array, got "gpu"');
    expect(() => parseRunConfig({ model: 'm', shutdownGraceMs: -1 })).toThrow('config shutdownGraceMs: at least 0 (got -1)');
    expect(parseRunConfig({ model: 'm', shutdownGraceMs: 1500 }).shutdownGraceMs).toBe(1500);
    expect(planError({ gpu: 'cpu', replicas: [{ gpus: [0] }, { gpus: [1] }] })).toMatch(/groups name cards but "gpu" is "cpu"/);
  });
});
