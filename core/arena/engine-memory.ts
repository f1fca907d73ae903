/**
 * An estimate of one engine's private host memory, for the arena's RAM warning: the runtime (Node,
 * llama.cpp's buffers) plus, for a CPU engine, its KV cache computed from the GGUF's attention shape.
 * Weights are not counted: with the arena they are shared, not private.
 */
import { metadataNumber, metadataText, type GgufHeader } from '../../common/gguf/header-reader.js';
import type { KvType } from '../../common/rebuild.js';

/** Node, llama.cpp's compute buffers and the slots' bookkeeping, measured at ~150–250 MiB on the test models. */
export const ENGINE_RUNTIME_BYTES = 256 * 1024 * 1024;

const KV_BYTES_PER_ELEMENT: Readonly<Record<KvType, number>> = { f32: 4, f16: 2, q8_0: 34 / 32, q4_0: 18 / 32 };

export interface EngineMemoryOptions {
  contextSize: number;
  slots: number;
  kvType: KvType;
  /** 0 keeps the KV cache in host RAM; with layers on a GPU it lives in VRAM. */
  gpuLayers: number | 'auto';
}

/** The KV cache's bytes for `options` by the model's shape; null when the header lacks it. */
export function kvCacheBytes(header: GgufHeader, options: Omit<EngineMemoryOptions, 'gpuLayers'>): number | null {
  const arch = metadataText(header, 'general.architecture');
  if (arch === null) return null;
  const layers = metadataNumber(header, `${arch}.block_count`);
  const width = metadataNumber(header, `${arch}.embedding_length`);
  const heads = metadataNumber(header, `${arch}.attention.head_count`);
  if (!layers || !width || !heads) return null;
  const kvHeads = metadataNumber(header, `${arch}.attention.head_count_kv`) ?? heads;
  const keyLength = metadataNumber(header, `${arch}.attention.key_length`) ?? width / heads;
  const valueLength = metadataNumber(header, `${arch}.attention.value_length`) ?? width / heads;
  const cells = options.contextSize * options.slots;
  return Math.ceil(layers * cells * kvHeads * (keyLength + valueLength) * KV_BYTES_PER_ELEMENT[options.kvType]);
}

export function enginePrivateBytes(header: GgufHeader, options: EngineMemoryOptions): number {
  const kvOnHost = options.gpuLayers === 0 ? (kvCacheBytes(header, options) ?? 0) : 0;
  return ENGINE_RUNTIME_BYTES + kvOnHost;
}
