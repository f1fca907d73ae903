/**
 * The check that a peer serves the model the other replicas serve, before anything is routed to it: the
 * model's name (the peer's id with its folder and `.gguf` dropped, against the local file's name or the
 * plan's `model`), and the GGUF figures where the peer exposes them (llama-server's vocabulary size and
 * parameter count). A mismatch is an Error saying which model the peer serves.
 */
import { basename } from 'node:path';
import { metadataArrayLength, type GgufHeader } from '../../common/gguf/header-reader.js';
import type { PeerModel } from './peer-probe.js';

/** The model every replica must serve, as the local file tells it. */
export interface ExpectedModel {
  /** The local file's name without `.gguf`. */
  readonly id: string;
  readonly vocabSize: number | null;
  readonly parameters: number | null;
}

const bareName = (id: string): string => basename(id).replace(/\.gguf$/i, '');

/** The model as the local file tells it (its name, vocabulary and parameter count): what every replica must serve. */
export function expectedModelFrom(modelPath: string, header: GgufHeader | null): ExpectedModel {
  return {
    id: bareName(modelPath),
    vocabSize: header ? metadataArrayLength(header.metadata.get('tokenizer.ggml.tokens')) : null,
    parameters: header ? header.tensors.reduce((sum, t) => sum + t.dims.reduce((a, b) => a * b, 1), 0) : null,
  };
}

/**
 * The peer's entry for the expected model (the one to name in requests), or an Error naming what it
 * serves. `planModel` is the peer's name for the model when the run config gives one.
 */
export function matchPeerModel(url: string, models: readonly PeerModel[], expected: ExpectedModel, planModel: string | null): PeerModel {
  const wanted = planModel ?? expected.id;
  const match = models.find((m) => m.id === wanted || bareName(m.id) === bareName(wanted));
  const fix = 'point this replica at a server of the same model';
  if (!match) {
    const served = models.length === 0 ? 'no model' : models.map((m) => `"${bareName(m.id)}"`).join(', ');
    const rename =
      planModel === null && models.length > 0 ? ` (if it is the same model under another name, set the replica's "model" to "${models[0]!.id}")` : '';
    throw new Error(`${url}: serves ${served}, not "${wanted}"; ${fix}${rename}`);
  }
  const vocab = match.meta?.n_vocab;
  if (vocab !== undefined && expected.vocabSize !== null && vocab !== expected.vocabSize) {
    throw new Error(`${url}: serves "${bareName(match.id)}" with a vocabulary of ${vocab} tokens, not the ${expected.vocabSize} of "${expected.id}"; ${fix}`);
  }
  const parameters = match.meta?.n_params;
  if (parameters !== undefined && expected.parameters !== null && parameters !== expected.parameters) {
    throw new Error(`${url}: serves "${bareName(match.id)}" with ${parameters} parameters, not the ${expected.parameters} of "${expected.id}"; ${fix}`);
  }
  return match;
}
