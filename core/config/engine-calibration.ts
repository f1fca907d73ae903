/**
 * Which engine kind is the faster on this machine, as `manifold engine calibrate` measured it (one replica
 * of each kind on the same model, slots, threads and request, one after the other:
 * cli/engine-calibrate.ts). Which one wins depends on the CPU or GPU and on llama.cpp's kernels for
 * it (an AMD EPYC ran llama-server 3–4× faster; an Intel Xeon with AMX ran node-llama-cpp 2.4× faster at one
 * thread while llama-server's child ran flash attention on the CPU, and llama-server faster at two without
 * it: docs/BENCHMARKS.md), so the verdict is kept in the data dir with the machine it was measured on, and the
 * default engine kind follows it where llama-server's binary is found (engine-kinds/default-engine-kind.ts). A file
 * that does not parse, or another machine's, is ignored, and the reason is given. The command writes it
 * (`writeCalibration`, atomically, in cli/engine-calibrate.ts).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { firstIssueInWords } from '../../common/issue-words.js';

/** The two kinds a calibration weighs against each other (the built-in ones: engine-kinds/engine-kinds.ts). */
export const CALIBRATED_KINDS = ['node-llama-cpp', 'llama-server'] as const;
export type CalibratedKind = (typeof CALIBRATED_KINDS)[number];

export const CALIBRATION_FILE = 'engine-calibration.json';

const kindFiguresSchema = z.object({
  prefillTokensPerSecond: z.number().positive(),
  decodeTokensPerSecond: z.number().positive(),
  /** The request's own time on this kind: its prompt's prefill and its answer's decode. */
  seconds: z.number().positive(),
});
export type KindFigures = z.infer<typeof kindFiguresSchema>;

const engineCalibrationSchema = z.object({
  version: z.literal(1),
  /** thisMachine() where it was measured. */
  machine: z.string(),
  measuredAt: z.string(),
  model: z.string(),
  /** The engine threads both kinds ran with (0: each kind's own default). */
  threads: z.number().int().nonnegative(),
  promptTokens: z.number().int().positive(),
  answerTokens: z.number().int().positive(),
  kinds: z.object({ 'node-llama-cpp': kindFiguresSchema, 'llama-server': kindFiguresSchema }),
  faster: z.enum(CALIBRATED_KINDS),
});
export type EngineCalibration = z.infer<typeof engineCalibrationSchema>;

/**
 * The machine a verdict belongs to: its CPU model, how many CPUs this process may use, and how many GPUs
 * it sees (`gpus`), so a card added since, or moved to another box, asks for a new calibration.
 */
export function thisMachine(gpus: number): string {
  return `${os.cpus()[0]?.model.trim() || 'unknown CPU'} × ${os.availableParallelism()}, ${gpus} GPU${gpus === 1 ? '' : 's'}`;
}

/** The kind that served the calibration request sooner. */
export function fasterKind(kinds: Record<CalibratedKind, KindFigures>): CalibratedKind {
  return kinds['llama-server'].seconds <= kinds['node-llama-cpp'].seconds ? 'llama-server' : 'node-llama-cpp';
}

/** The data dir's verdict for `machine` (thisMachine); null with the reason when there is none to follow (none at all: no reason). */
export function readCalibration(dataDir: string, machine: string): { calibration: EngineCalibration | null; ignored?: string } {
  const path = join(dataDir, CALIBRATION_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { calibration: null };
    return { calibration: null, ignored: `${path} could not be read (${(error as Error).message})` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { calibration: null, ignored: `${path} is not JSON (${(error as Error).message}); run \`manifold engine calibrate\` again` };
  }
  const parsed = engineCalibrationSchema.safeParse(json);
  if (!parsed.success)
    return { calibration: null, ignored: `${path} is not a calibration (${firstIssueInWords(parsed.error).message}); run \`manifold engine calibrate\` again` };
  if (parsed.data.machine !== machine)
    return {
      calibration: null,
      ignored: `${path} was measured on another machine (${parsed.data.machine}, this is ${machine}); run \`manifold engine calibrate\` again`,
    };
  return { calibration: parsed.data };
}
