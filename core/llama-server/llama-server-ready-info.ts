/**
 * What a `llama-server` child loaded, as the ReadyInfo a node-llama-cpp engine reports: the model's
 * figures from its `/v1/models` metadata, the slots and per-slot context from `/props`, the rest from the
 * options it was started with (flash attention as its command line resolved it; llama-server does not
 * report its memory, so those read 0), and where it lends slot files when it does.
 */
import { loadOptionsSchema, type LoadOptionsInput, type ReadyInfo } from '../../common/engine-protocol.js';
import type { PeerDescription } from '../remote/peer-probe.js';
import { resolvedFlashAttention } from './llama-server-args.js';

/** `architecture`: the GGUF's `general.architecture` (llama-server's metadata does not carry it). */
export function readyInfoOf(
  description: PeerDescription,
  input: LoadOptionsInput,
  loadMs: number,
  lentSlotFolder: string | null,
  architecture: string | null = null,
): ReadyInfo {
  const load = loadOptionsSchema.parse(input);
  const model = description.models[0];
  const meta = model?.meta;
  const info: ReadyInfo = {
    model: {
      name: model?.id ?? null,
      architecture: meta?.architecture ?? architecture,
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
      flashAttention: resolvedFlashAttention(load),
      kvType: load.kvType,
      contextStateBytes: 0,
    },
    backend: 'llama-server',
    vram: { total: 0, used: 0, free: 0 },
    ram: { total: 0, used: 0, free: 0 },
    loadMs,
    modelLoads: 1,
  };
  if (lentSlotFolder === null) return info;
  // Its lent slot files (slot-file-shelf.ts), in one folder as both tiers: another llama-server child of the
  // same model file and layout restores them. The slot count is in the key: with a KV stream per slot
  // (`--no-kv-unified`) a state file names its count of streams, and llama.cpp refuses another; and so is the
  // kind: a node-llama-cpp engine's states are another format.
  const { sizes } = info;
  const layout = JSON.stringify(['llama-server', load.modelPath, info.model.fileBytes, sizes.slots, sizes.contextSize, sizes.kvType, sizes.flashAttention]);
  return { ...info, prefixCacheShare: { dirs: { ram: lentSlotFolder, disk: lentSlotFolder }, layout } };
}
