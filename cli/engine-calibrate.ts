/**
 * `manifold engine calibrate <model>`: measures which engine kind serves faster on this machine and
 * keeps the verdict in the data dir, which the default engine kind then follows
 * (core/config/engine-calibration.ts). One replica of each kind in turn, each freshly started
 * headless on the model, one slot, the same threads, the same request: a fresh prompt of `promptTokens`
 * and `answerTokens` decoded greedily past end-of-generation, after a short warm-up request. Its own
 * timings give the prefill and decode rates; the kind whose request took less time wins.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PREFIX_CACHE_OFF } from '../common/prefix-cache.js';
import { llamaServerFound } from '../core/engine-kinds/default-engine-kind.js';
import { writeFileAtomic } from '../core/chat/atomic-file.js';
import {
  CALIBRATED_KINDS,
  CALIBRATION_FILE,
  fasterKind,
  thisMachine,
  type CalibratedKind,
  type EngineCalibration,
  type KindFigures,
} from '../core/config/engine-calibration.js';
import { parseRunConfig } from '../core/config/run-config.js';
import { serve } from '../core/serve.js';

export interface CalibrateOptions {
  model: string;
  /** Engine threads for both kinds; 0 for each kind's own default. */
  threads: number;
  /** Where the verdict is written (the data dir serve reads it from). */
  dataDir: string;
  /** How many GPUs this machine has (part of the machine a verdict belongs to). */
  gpus: number;
  promptTokens?: number;
  answerTokens?: number;
  /** Each kind's figures as they are measured. */
  onMeasured?: (kind: CalibratedKind, figures: KindFigures) => void;
}

/** Ordinary words, for a prompt no cache holds. */
const WORDS = 'the model of a world where each replica serves its own slot and every answer comes back in time for the next turn'.split(' ');

async function measure(kind: CalibratedKind, options: Required<Omit<CalibrateOptions, 'onMeasured' | 'dataDir' | 'gpus'>>): Promise<KindFigures> {
  const { model, threads, promptTokens, answerTokens } = options;
  const dataDir = await mkdtemp(join(tmpdir(), 'manifold-calibrate-'));
  const config = parseRunConfig({
    model,
    replicas: 1,
    engine: { kind, slots: 1, ...(threads > 0 ? { threads } : {}), contextSize: promptTokens + answerTokens + 64, prefixCache: PREFIX_CACHE_OFF },
  });
  const served = await serve(config, { dataDir, logFile: null, front: { port: 0 } });
  try {
    const { workstation } = served;
    const promptOf = async (offset: number, length: number): Promise<number[]> => {
      const text = Array.from({ length: length + 8 }, (_, i) => WORDS[(i * 7 + offset) % WORDS.length]).join(' ');
      const tokens = await workstation.tokenizer.tokenize(text);
      while (tokens.length < length) tokens.push(...tokens);
      return tokens.slice(0, length);
    };
    const greedy = { temperature: 0, seed: 1 };
    await workstation.generate({ tokens: await promptOf(3, 32), maxTokens: 8, ignoreEos: true, sampling: greedy });
    const done = await workstation.generate({ tokens: await promptOf(1, promptTokens), maxTokens: answerTokens, ignoreEos: true, sampling: greedy });
    const { prefillTokens, prefillMs, decodeMs, decodeTokensPerSecond } = done.timings;
    if (prefillTokens <= 0 || prefillMs <= 0 || decodeTokensPerSecond <= 0) throw new Error(`${kind}: the calibration request reported no timings`);
    return { prefillTokensPerSecond: (prefillTokens * 1000) / prefillMs, decodeTokensPerSecond, seconds: (prefillMs + decodeMs) / 1000 };
  } finally {
    await served.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Measures both kinds and writes the verdict; refuses where llama-server's binary is not installed. */
export async function calibrateEngines(options: CalibrateOptions): Promise<{ calibration: EngineCalibration; path: string }> {
  if (!llamaServerFound())
    throw new Error('llama-server is not installed, so node-llama-cpp is the only engine kind here: install it with `manifold engine install` first');
  const settings = { model: options.model, threads: options.threads, promptTokens: options.promptTokens ?? 1024, answerTokens: options.answerTokens ?? 128 };
  const kinds = {} as Record<CalibratedKind, KindFigures>;
  for (const kind of CALIBRATED_KINDS) {
    kinds[kind] = await measure(kind, settings);
    options.onMeasured?.(kind, kinds[kind]);
  }
  const calibration: EngineCalibration = {
    version: 1,
    machine: thisMachine(options.gpus),
    measuredAt: new Date().toISOString(),
    ...settings,
    kinds,
    faster: fasterKind(kinds),
  };
  return { calibration, path: await writeCalibration(options.dataDir, calibration) };
}

/** Writes the verdict into the data dir, made if need be (atomically: a reader sees the old file or the new one). */
export async function writeCalibration(dataDir: string, calibration: EngineCalibration): Promise<string> {
  const path = join(dataDir, CALIBRATION_FILE);
  await mkdir(dataDir, { recursive: true });
  await writeFileAtomic(path, `${JSON.stringify(calibration, null, 2)}\n`);
  return path;
}
