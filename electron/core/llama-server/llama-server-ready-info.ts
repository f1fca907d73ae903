/**
 * What a `llama-server` child loaded, as the ReadyInfo a node-llama-cpp engine reports: the model's
 * figures from its `/v1/models` metadata, the slots and per-slot context from `/props`, and the rest from
 * the options it was started with (llama-server does not report its memory, so those read 0).
 */
import { loadOptionsSchema, type LoadOptionsInput, type ReadyInfo } from '../../../common/engine-protocol.js';
import type { PeerDescription } from '../remote/peer-probe.js';

export function readyInfoOf(description: PeerDescription, input: LoadOptionsInput, loadMs: number): ReadyInfo {
  const load = loadOptionsSchema.parse(input);
  const model = description.models[0];
  const meta = model?.meta;
  return {
    model: {
      name: model?.id ?? null,
      architecture: meta?.architecture ?? null,
      trainContextSize: meta?.n_ctx_train ?? 0,
      vocabSize: meta?.n_vocab ?? 0,
      parameters: meta?.n_params ?? 0,
      fileBytes: meta?.size ?? 0,
    },
    sizes: {
      contextSize: description.contextSize ?? load.contextSize,
      slots: description.slots ?? load.slots,
      gpuLayers: typeof load.gpuLayers === 'number' ? load.gpuLayers : 0,
      batchSize: load.batchSize ?? 0,
      flashAttention: load.flashAttention,
      kvType: load.kvType,
      contextStateBytes: 0,
    },
    backend: 'llama-server',
    vram: { total: 0, used: 0, free: 0 },
    ram: { total: 0, used: 0, free: 0 },
    loadMs,
    modelLoads: 1,
  };
}
