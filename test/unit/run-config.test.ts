/** Run config rules (DESIGN §3), each with its documented message; the default engine kind and the calibration it follows. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeCalibration } from '../../cli/engine-calibrate.js';
import {
  CALIBRATION_FILE,
  fasterKind,
  readCalibration,
  thisMachine,
  type CalibratedKind,
  type EngineCalibration,
} from '../../core/config/engine-calibration.js';
import { ConfigError, parseRunConfig, planReplicas, type MachineFacts } from '../../core/config/run-config.js';
import { defaultEngineKind } from '../../core/engine-kinds/default-engine-kind.js';
import { engineKind } from '../../core/engine-kinds/engine-kinds.js';
import { DEFAULT_REMOTE_TIMEOUTS } from '../../core/config/remote-plan.js';

const gpuMachine: MachineFacts = { detectedGpus: [0, 1, 2, 3], cpuCores: 16, defaultEngineKind: 'node-llama-cpp' };
const cpuMachine: MachineFacts = { detectedGpus: [], cpuCores: 8, defaultEngineKind: 'node-llama-cpp' };
const plan = (config: Record<string, unknown>, machine = gpuMachine) => planReplicas(parseRunConfig({ model: 'm.gguf', ...config }), machine);
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
    expect(plans.map((p) => p.gpus)).toEqual([
      [0, 1],
      [2, 3],
    ]);
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
    // Prefix-cache budgets merge one by one: a group turning its disk tier off keeps the base's RAM budget.
    const budgets = plan({ replicas: [{ gpus: [0] }, { gpus: [1], args: { prefixCache: { diskBytes: 0 } } }], engine: { prefixCache: { ramBytes: 0 } } });
    expect(budgets.map((p) => p.engine.prefixCache)).toEqual([{ ramBytes: 0 }, { ramBytes: 0, diskBytes: 0 }]);
    expect(plan({ replicas: [{ gpus: [0] }, { gpus: [1], args: { prefixCache: { ramBytes: 1 } } }] }).map((p) => p.engine.prefixCache)).toEqual([
      undefined,
      { ramBytes: 1 },
    ]);
  });

  it('refuses a group without cards, a card in two groups, and cards that are not numbers', () => {
    const needsCards = 'replicas[1]: every local group needs cards, e.g. {"gpus": [0, 1]} (or a "url" for a remote server)';
    expect(planError({ replicas: [{ gpus: [0] }, {}] })).toBe(needsCards);
    expect(planError({ replicas: [{ gpus: [0] }, { gpus: [] }] })).toBe(needsCards);
    expect(planError({ replicas: [{ gpus: [0] }, { gpus: '' }] })).toBe(needsCards);
    expect(planError({ replicas: [{ gpus: [0, 1] }, { gpus: [1, 2] }] })).toBe(
      'replicas[1].gpus: card 1 is in replica 0 and replica 1; each card may serve one replica',
    );
    expect(planError({ replicas: [{ gpus: [0] }, { gpus: ['a'] }] })).toBe(
      'replicas[1].gpus: card "a" is not a card number (cards are whole numbers such as 0, 1, 2)',
    );
    expect(planError({ gpu: [0, 1.5] })).toBe('gpu: card 1.5 is not a card number (cards are whole numbers such as 0, 1, 2, or "cpu" for CPU engines)');
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
    expect(() => parseRunConfig({ model: 'm', gpu: 5 })).toThrow('config gpu: expected "cpu" or a card list such as [0, 1] or "0,1"; got 5');
    expect(planError({ gpu: 'gpu' })).toBe('gpu: card "gpu" is not a card number (cards are whole numbers such as 0, 1, 2, or "cpu" for CPU engines)');
    expect(() => parseRunConfig({ model: 'm', shutdownGraceMs: -1 })).toThrow('config shutdownGraceMs: at least 0 (got -1)');
    expect(parseRunConfig({ model: 'm', shutdownGraceMs: 1500 }).shutdownGraceMs).toBe(1500);
    expect(() => parseRunConfig({ model: 'm', engine: { prefixCache: { ramBytes: -1 } } })).toThrow('config engine.prefixCache.ramBytes: at least 0 (got -1)');
    expect(() => parseRunConfig({ model: 'm', engine: { prefixCache: { ram: 1 } } })).toThrow('config engine.prefixCache: unknown field "ram"');
    expect(planError({ gpu: 'cpu', replicas: [{}, { gpus: [1] }] })).toBe(
      'replicas[1].gpus: the group names cards but "gpu" is "cpu" (or no GPU was detected); remove the cards or the "cpu" setting',
    );
  });

  it('reads false and an empty list as one engine, and refuses true in words', () => {
    expect(plan({ replicas: false }).map((p) => p.gpus)).toEqual([[0, 1, 2, 3]]);
    expect(plan({ replicas: [] }).map((p) => p.gpus)).toEqual([[0, 1, 2, 3]]);
    expect(plan({ replicas: [], log: '/tmp/m.log' }, cpuMachine)).toMatchObject([
      { index: 0, cpu: true, engine: { threads: 8 }, logFile: '/tmp/m.log', remote: null },
    ]);
    expect(() => parseRunConfig({ model: 'm', replicas: true })).toThrow(
      'config replicas: true is neither a replica count nor a list of groups; use a number ("replicas": 2), false for one engine, ' +
        'or a list ("replicas": [{"gpus": [0, 1]}, {"url": "http://host:8080"}])',
    );
    expect(() => parseRunConfig({ model: 'm', replicas: [{ gpus: [0] }, 3] })).toThrow(
      'config replicas: entry 1 is 3, not a replica; each entry is a local group {"gpus": [0, 1]} or a remote server {"url": "http://gpu-box-2:8080"}',
    );
    // An entry that is an object is named by its own field.
    expect(() => parseRunConfig({ model: 'm', replicas: [{ gpus: [0] }, { gpu: [1] }] })).toThrow('config replicas[1]: unknown field "gpu"');
  });

  it('reads a card list given as a string, spaces allowed, and names a bad piece', () => {
    expect(plan({ gpu: '0,1,2,3', replicas: 2 }).map((p) => p.gpus)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(plan({ gpu: ' 3, 2 ,1' }).map((p) => p.gpus)).toEqual([[3, 2, 1]]);
    expect(plan({ replicas: [{ gpus: '0, 1' }, { gpus: '2' }] }).map((p) => p.gpus)).toEqual([[0, 1], [2]]);
    expect(planError({ gpu: '0,1,x,3' })).toBe(
      'gpu: card "x" in "0,1,x,3" is not a card number (cards are whole numbers such as 0, 1, 2, or "cpu" for CPU engines)',
    );
    expect(planError({ gpu: '0,,1' })).toBe('gpu: card "" in "0,,1" is not a card number (cards are whole numbers such as 0, 1, 2, or "cpu" for CPU engines)');
    expect(planError({ replicas: [{ gpus: '0,-1' }, { gpus: [2] }] })).toBe(
      'replicas[0].gpus: card "-1" in "0,-1" is not a card number (cards are whole numbers such as 0, 1, 2)',
    );
    expect(planError({ gpu: ' ', replicas: 2 })).toMatch(/^gpu: the card list is empty/);
    expect(() => parseRunConfig({ model: 'm', replicas: [{ gpus: 3 }] })).toThrow(
      'config replicas[0].gpus: expected a card list such as [0, 1] or "0,1"; got 3',
    );
  });

  it('refuses a card listed twice in one group or in the gpu list', () => {
    expect(planError({ replicas: [{ gpus: [0, 0] }, { gpus: [1] }] })).toBe('replicas[0].gpus: card 0 is listed twice in replica 0; list each card once');
    expect(planError({ replicas: [{ gpus: '1, 1' }] })).toBe('replicas[0].gpus: card 1 is listed twice in replica 0; list each card once');
    expect(planError({ gpu: [0, 1, 0, 1], replicas: 2 })).toBe('gpu: card 0 is listed twice; list each card once');
  });
});

describe('run config: engine kind', () => {
  it("runs the machine's default kind unless engine.kind names one, and keeps the kind out of the engine options", () => {
    expect(plan({ replicas: 2 }, cpuMachine).map((p) => p.engineKind)).toEqual(['node-llama-cpp', 'node-llama-cpp']);
    expect(plan({ replicas: 2 }, { ...cpuMachine, defaultEngineKind: 'llama-server' }).map((p) => p.engineKind)).toEqual(['llama-server', 'llama-server']);
    expect(plan({ engine: { kind: 'node-llama-cpp' } }, { ...cpuMachine, defaultEngineKind: 'llama-server' })[0]!.engineKind).toBe('node-llama-cpp');
    const plans = plan({ replicas: 2, engine: { kind: 'llama-server', slots: 4, threads: 1 } }, cpuMachine);
    expect(plans.map((p) => p.engineKind)).toEqual(['llama-server', 'llama-server']);
    expect(plans[0]!.engine).toEqual({ threads: 1, slots: 4, gpuLayers: 0 });
  });

  it('names the field for what cannot be a kind, names the kinds for one it does not know, and refuses a kind per replica', () => {
    expect(planError({ engine: { kind: 'no kind!' } })).toBe('config engine.kind: "no kind!" is not an engine kind\'s name');
    expect(() => engineKind('vllm')).toThrow(ConfigError);
    expect(() => engineKind('vllm')).toThrow(/^engine\.kind: "vllm" is not an engine kind; use "node-llama-cpp" \(.+\), or "llama-server" \(.+\)$/);
    expect(planError({ replicas: [{ gpus: [0], args: { kind: 'llama-server' } }] })).toMatch(/replicas\[0\]\.args.*kind/);
  });
});

describe('run config: the default engine kind', () => {
  it('is llama-server where its binary is installed and node-llama-cpp elsewhere', () => {
    expect(defaultEngineKind({ env: {}, binaryFound: () => true })).toBe('llama-server');
    expect(defaultEngineKind({ env: {}, binaryFound: () => false })).toBe('node-llama-cpp');
  });

  it('is what MANIFOLD_ENGINE_KIND names, whatever is installed, and an unknown name is an error in words', () => {
    expect(defaultEngineKind({ env: { MANIFOLD_ENGINE_KIND: 'node-llama-cpp' }, binaryFound: () => true })).toBe('node-llama-cpp');
    expect(defaultEngineKind({ env: { MANIFOLD_ENGINE_KIND: 'llama-server' }, binaryFound: () => false })).toBe('llama-server');
    expect(() => defaultEngineKind({ env: { MANIFOLD_ENGINE_KIND: 'vllm' }, binaryFound: () => true })).toThrow(
      /^MANIFOLD_ENGINE_KIND: "vllm" is not an engine kind; use "node-llama-cpp" \(.+\), or "llama-server" \(.+\)$/,
    );
  });

  it("follows this machine's calibration where llama-server is installed; MANIFOLD_ENGINE_KIND still wins", () => {
    const calibration = (faster: CalibratedKind): EngineCalibration => ({ ...CALIBRATION, faster });
    expect(defaultEngineKind({ env: {}, binaryFound: () => true, calibration: calibration('node-llama-cpp') })).toBe('node-llama-cpp');
    expect(defaultEngineKind({ env: {}, binaryFound: () => true, calibration: calibration('llama-server') })).toBe('llama-server');
    expect(defaultEngineKind({ env: {}, binaryFound: () => false, calibration: calibration('llama-server') })).toBe('node-llama-cpp');
    expect(defaultEngineKind({ env: { MANIFOLD_ENGINE_KIND: 'llama-server' }, binaryFound: () => true, calibration: calibration('node-llama-cpp') })).toBe(
      'llama-server',
    );
  });
});

describe('engine calibration file', () => {
  const dataDir = (): string => mkdtempSync(join(tmpdir(), 'manifold-calibration-'));

  it('is read back as written, for this machine; none at all is no reason to warn', async () => {
    const dir = dataDir();
    expect(readCalibration(dir, thisMachine(0))).toEqual({ calibration: null });
    await writeCalibration(dir, CALIBRATION);
    expect(readCalibration(dir, thisMachine(0))).toEqual({ calibration: CALIBRATION });
  });

  it("is ignored, saying why, when it is not JSON, not a calibration, or another machine's", async () => {
    const dir = dataDir();
    writeFileSync(join(dir, CALIBRATION_FILE), '{"version": 1, "machine"');
    expect(readCalibration(dir, thisMachine(0)).ignored).toMatch(/engine-calibration\.json is not JSON \(.*\); run `manifold engine calibrate` again$/);
    writeFileSync(join(dir, CALIBRATION_FILE), JSON.stringify({ ...CALIBRATION, faster: 'vllm' }));
    expect(readCalibration(dir, thisMachine(0)).ignored).toMatch(
      /engine-calibration\.json is not a calibration \(faster: .*\); run `manifold engine calibrate` again$/,
    );
    await writeCalibration(dir, { ...CALIBRATION, machine: 'Another CPU × 64' });
    expect(readCalibration(dir, thisMachine(0))).toEqual({
      calibration: null,
      ignored: `${join(dir, CALIBRATION_FILE)} was measured on another machine (Another CPU × 64, this is ${thisMachine(0)}); run \`manifold engine calibrate\` again`,
    });
    // A card added since is another machine too.
    await writeCalibration(dir, CALIBRATION);
    expect(readCalibration(dir, thisMachine(1)).ignored).toContain(`was measured on another machine (${thisMachine(0)}, this is ${thisMachine(1)})`);
  });

  it('names the kind whose request took less time the faster', () => {
    const figures = (seconds: number) => ({ prefillTokensPerSecond: 1, decodeTokensPerSecond: 1, seconds });
    expect(fasterKind({ 'node-llama-cpp': figures(1.8), 'llama-server': figures(2.5) })).toBe('node-llama-cpp');
    expect(fasterKind({ 'node-llama-cpp': figures(2.5), 'llama-server': figures(1.8) })).toBe('llama-server');
  });
});

/** A verdict measured on this machine (the figures of a calibration run on the bench model). */
const CALIBRATION: EngineCalibration = {
  version: 1,
  machine: thisMachine(0),
  measuredAt: '2026-12-05T22:11:02.031Z',
  model: '/models/bench.gguf',
  threads: 1,
  promptTokens: 1024,
  answerTokens: 128,
  kinds: {
    'node-llama-cpp': { prefillTokensPerSecond: 1525.2, decodeTokensPerSecond: 113.2, seconds: 1.79 },
    'llama-server': { prefillTokensPerSecond: 1646.8, decodeTokensPerSecond: 67.7, seconds: 2.5 },
  },
  faster: 'node-llama-cpp',
};

describe('run config: remote replicas', () => {
  const parseError = (replicas: unknown[]): string => {
    try {
      parseRunConfig({ model: 'm.gguf', replicas });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('plans a mixed list in its order: local CPU engines share the cores, remotes get their defaults', () => {
    const plans = plan(
      {
        replicas: [
          {},
          { url: 'http://gpu-box-2:8080' },
          { args: { slots: 2 } },
          { url: 'https://Box-3.lan/v1/', kind: 'openai', apiKey: 'k', slots: 8, model: 'qwen', timeouts: { idleMs: 5000 } },
        ],
        engine: { contextSize: 2048 },
        env: { A: '1' },
        log: '/tmp/m.log',
      },
      cpuMachine,
    );
    expect(plans.map((p) => p.index)).toEqual([0, 1, 2, 3]);
    expect(plans.map((p) => p.remote === null)).toEqual([true, false, true, false]);
    // floor(8 cores / 2 local replicas): the remotes take no cores.
    expect(plans[0]).toEqual({
      index: 0,
      gpus: [],
      cpu: true,
      env: { CUDA_VISIBLE_DEVICES: '', HIP_VISIBLE_DEVICES: '', GGML_VK_VISIBLE_DEVICES: '', A: '1' },
      engine: { threads: 4, contextSize: 2048, gpuLayers: 0 },
      engineKind: 'node-llama-cpp',
      logFile: '/tmp/m.log.r0',
      remote: null,
    });
    expect(plans[2]!.engine).toEqual({ threads: 4, contextSize: 2048, gpuLayers: 0, slots: 2 });
    expect(plans[1]).toEqual({
      index: 1,
      gpus: [],
      cpu: false,
      env: {},
      engine: {},
      engineKind: null,
      logFile: '/tmp/m.log.r1',
      remote: { url: 'http://gpu-box-2:8080', kind: 'auto', apiKey: null, slots: null, model: null, timeouts: DEFAULT_REMOTE_TIMEOUTS },
    });
    expect(plans[3]!.remote).toEqual({
      url: 'https://box-3.lan/v1',
      kind: 'openai',
      apiKey: 'k',
      slots: 8,
      model: 'qwen',
      timeouts: { connectMs: 5000, firstTokenMs: 120_000, idleMs: 5000 },
    });
  });

  it('applies the card rules to local groups only, and allows a list of remotes alone', () => {
    const plans = plan({ replicas: [{ url: 'http://a:1' }, { gpus: [0, 1] }, { url: 'http://b:1' }, { gpus: '2,3' }] });
    expect(plans.map((p) => [p.index, p.gpus, p.cpu, p.remote?.url ?? null])).toEqual([
      [0, [], false, 'http://a:1'],
      [1, [0, 1], false, null],
      [2, [], false, 'http://b:1'],
      [3, [2, 3], false, null],
    ]);
    expect(plans[1]!.env.CUDA_VISIBLE_DEVICES).toBe('0,1');
    // A gateway: no local engine, on a machine with cards or without.
    expect(plan({ replicas: [{ url: 'http://a:1' }, { url: 'http://b:1' }] }).every((p) => p.remote !== null && p.gpus.length === 0)).toBe(true);
    expect(plan({ replicas: [{ url: 'http://a:1' }], log: '/tmp/m.log' }, cpuMachine)).toMatchObject([
      { index: 0, cpu: false, logFile: '/tmp/m.log', remote: { url: 'http://a:1' } },
    ]);
  });

  it('refuses a URL that is not http(s) or does not parse, naming the field and the value', () => {
    const notHttp = (value: string, index = 0) =>
      `config replicas[${index}].url: ${JSON.stringify(value)} is not an http(s) server address; write it as "http://gpu-box-2:8080" or "https://gpu-box-2" (no query, fragment or user: the key goes in "apiKey")`;
    expect(parseError([{ url: 'ftp://gpu-box-2:8080' }])).toBe(notHttp('ftp://gpu-box-2:8080'));
    expect(parseError([{ url: 'gpu-box-2:8080' }])).toBe(notHttp('gpu-box-2:8080'));
    expect(parseError([{ gpus: [0] }, { url: 'not a url' }])).toBe(notHttp('not a url', 1));
    expect(parseError([{ url: 'http://user:pw@gpu-box-2:8080' }])).toBe(notHttp('http://user:pw@gpu-box-2:8080'));
    expect(parseError([{ url: 'http://gpu-box-2:8080/?x=1' }])).toBe(notHttp('http://gpu-box-2:8080/?x=1'));
    expect(parseError([{ url: 3 }])).toBe('config replicas[0].url: expected a string, got 3');
  });

  it('refuses the same server twice, comparing normalized URLs', () => {
    expect(parseError([{ url: 'http://gpu-box-2:8080' }, { gpus: [0] }, { url: 'HTTP://GPU-Box-2:8080/' }])).toBe(
      'config replicas[2].url: "http://gpu-box-2:8080" is already replicas[0]; list each server once (its "slots" say how many requests it takes at a time)',
    );
    // The default port is the same server; another port or scheme is another.
    expect(parseError([{ url: 'http://h' }, { url: 'http://h:80/' }])).toMatch(/^config replicas\[1\]\.url: "http:\/\/h" is already replicas\[0\]/);
    expect(plan({ replicas: [{ url: 'http://h' }, { url: 'http://h:8080' }, { url: 'https://h' }] }).map((p) => p.remote!.url)).toEqual([
      'http://h',
      'http://h:8080',
      'https://h',
    ]);
  });

  it('refuses local fields on a remote entry and remote fields on a local one', () => {
    const local = (field: string) =>
      `config replicas[1].${field}: "${field}" is for a local engine and means nothing for a remote replica ("url": "http://gpu-box-2:8080"), which runs on its own machine; remove "${field}", or remove "url" for a local group`;
    expect(parseError([{ gpus: [0] }, { url: 'http://gpu-box-2:8080', gpus: [1] }])).toBe(local('gpus'));
    expect(parseError([{ gpus: [0] }, { url: 'http://gpu-box-2:8080', env: { A: '1' } }])).toBe(local('env'));
    expect(parseError([{ gpus: [0] }, { url: 'http://gpu-box-2:8080', args: { slots: 2 } }])).toBe(local('args'));
    expect(parseError([{ gpus: [0], kind: 'openai' }])).toBe(
      'config replicas[0].kind: "kind" is for a remote replica and this entry has no "url"; add the server\'s "url" (e.g. "http://gpu-box-2:8080"), or remove "kind"',
    );
    expect(parseError([{ gpus: [0], slots: 2 }])).toMatch(/^config replicas\[0\]\.slots: "slots" is for a remote replica/);
  });

  it('refuses fewer than one slot, an unknown kind and bad timeouts, each with the fix', () => {
    expect(parseError([{ url: 'http://h:1', slots: 0 }])).toBe(
      'config replicas[0].slots: 0 slots cannot serve anything; use 1 or more, or leave "slots" out to take what the server reports',
    );
    expect(parseError([{ url: 'http://h:1', slots: 2.5 }])).toBe('config replicas[0].slots: expected a whole number, got 2.5');
    expect(parseError([{ url: 'http://h:1', kind: 'vllm' }])).toBe(
      'config replicas[0].kind: "vllm" is not a kind of server; use "llama-server", "manifold", "openai" (vLLM, SGLang, Ollama and other OpenAI-compatible servers) or "auto" to ask the server',
    );
    expect(parseError([{ url: 'http://h:1', timeouts: { connectMs: 0 } }])).toBe('config replicas[0].timeouts.connectMs: at least 1 (got 0)');
    expect(parseError([{ url: 'http://h:1', timeouts: { readMs: 10 } }])).toBe('config replicas[0].timeouts: unknown field "readMs"');
    expect(parseError([{ url: 'http://h:1', apiKey: '' }])).toBe('config replicas[0].apiKey: must not be empty');
  });
});
