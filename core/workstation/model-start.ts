/**
 * Bringing a model up, the workstation's load in two steps: `validateModel` (the bounded header check with
 * llama.cpp's hyper-parameter bounds, then the model's tokenizer child opened with a weights probe: everything
 * that could abort on a hostile file runs in that child) and `startModel` (the shared arena filled when asked,
 * then the replicas started from it). Each step is reported to the workstation's load listeners.
 */
import { basename } from 'node:path';
import type { LoadStep } from '../../common/contract.js';
import { GgufFormatError, type GgufHeader } from '../../common/gguf/header-reader.js';
import { readModelFileHeader } from '../../common/node/gguf-file.js';
import type { ArenaFacts } from '../arena/arena-plan.js';
import { enginePrivateBytes } from '../arena/engine-memory.js';
import { SharedArena } from '../arena/shared-arena.js';
import type { RunConfig } from '../config/run-config.js';
import type { SpawnTokenizer } from '../engine/engine-process.js';
import type { CoreLog } from '../logging/core-log.js';
import { expectedModelFrom } from '../remote/model-match.js';
import type { ReplicaSet } from '../replicas/replica-set.js';
import { Tokenizer, type TokenizerOptions } from '../tokenizer.js';

/** Everything that belongs to one loaded model. */
export interface LoadedModel {
  config: RunConfig;
  modelId: string;
  replicas: ReplicaSet;
  arena: SharedArena | undefined;
  tokenizer: Tokenizer | undefined;
  started: boolean;
}

/** A model that passed validation: its header (within llama.cpp's bounds) and its tokenizer child, weights probed. */
export interface ValidatedModel {
  header: GgufHeader;
  tokenizer: Tokenizer;
}

/** What bringing a model up needs of the workstation. */
export interface BringUp {
  readonly log: CoreLog;
  step(step: LoadStep): void;
  readonly spawnTokenizer: SpawnTokenizer;
  readonly tokenizerOptions?: Omit<TokenizerOptions, 'spawn' | 'log' | 'probeWeights'>;
  /** Arena facts given instead of read off the machine (tests force the /dev/shm fallback). */
  readonly arenaFacts?: Partial<ArenaFacts>;
  /** Adds the model to the recent-models list. */
  noteLoaded(modelPath: string): Promise<void>;
}

/** The header check, then the model's tokenizer child opened with a weights probe. */
export async function validateModel(model: string, host: BringUp): Promise<ValidatedModel> {
  host.step({ step: 'validate', detail: `checking the header of ${basename(model)}`, fraction: 0 });
  const header = await readModelFileHeader(model).catch((error: Error) => {
    throw error instanceof GgufFormatError ? new Error(`${model} failed validation: ${error.message}`) : error;
  });
  host.step({ step: 'validate', detail: 'opening the tokenizer process: the vocabulary, then a probe of the weights', fraction: 0.5 });
  const tokenizer = await Tokenizer.open(model, { spawn: host.spawnTokenizer, log: host.log.sink, ...host.tokenizerOptions, probeWeights: true });
  return { header, tokenizer };
}

/** Fills the arena (when asked) and starts the replicas of a validated model; rejects when every replica fails. */
export async function startModel(loaded: LoadedModel, validated: ValidatedModel, host: BringUp): Promise<void> {
  const { config, replicas } = loaded;
  loaded.tokenizer = validated.tokenizer;
  replicas.expectModel(expectedModelFrom(config.model, validated.header));
  host.step({ step: 'arena', detail: config.shared_arena ? 'reading the model into the arena' : 'shared_arena is off', fraction: 0 });
  loaded.arena = await SharedArena.start({
    modelPath: config.model,
    requested: config.shared_arena === true,
    engines: replicas.localPlans.length,
    enginePrivateBytes: config.shared_arena ? largestEngineBytes(replicas, validated.header) : 0,
    log: host.log.sink,
    onProgress: (fraction) => host.step({ step: 'arena', detail: 'reading the model into the arena', fraction }),
    ...(host.arenaFacts ? { facts: host.arenaFacts } : {}),
  });
  replicas.loadModelFrom(loaded.arena.modelPath);
  validated.tokenizer.reopenFrom(loaded.arena.modelPath);
  host.step({ step: 'replicas', detail: `starting ${replicas.size} replicas`, fraction: 0 });
  const offReady = replicas.onReady((ready) =>
    host.step({ step: 'replicas', detail: `${ready} of ${replicas.size} replicas ready`, fraction: ready / replicas.size }),
  );
  try {
    await replicas.start();
  } finally {
    offReady();
  }
  loaded.started = true;
  await host.noteLoaded(config.model).catch((error: Error) => host.log.warn(`recent models: not saved (${error.message})`));
  host.log.info(`workstation ready: ${replicas.info().replicas_alive}/${replicas.size} replicas of ${loaded.modelId}`);
  host.step({ step: 'ready', detail: `${replicas.info().replicas_alive}/${replicas.size} replicas of ${loaded.modelId}`, fraction: 1 });
}

/** The largest private memory one engine's plan is estimated to take (the arena's RAM warning). */
function largestEngineBytes(replicas: ReplicaSet, header: GgufHeader): number {
  const estimates = replicas.localPlans.map(({ engine }) =>
    enginePrivateBytes(header, {
      contextSize: engine.contextSize ?? 4096,
      slots: engine.slots ?? 1,
      kvType: engine.kvType ?? 'f16',
      gpuLayers: engine.gpuLayers ?? 'auto',
    }),
  );
  return Math.max(0, ...estimates);
}
