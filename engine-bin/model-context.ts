/**
 * The engine's model and context at their sizes: what a loaded engine holds (LoadedModel), how a context
 * with its slots is created from load options, and the load-option check that llama.cpp would otherwise
 * fail inside. Batches serve prompts in arrival order. Used by the load
 * (model-host.ts) and by the allocation of a live resize (model-resize.ts).
 */
import type { LlamaContext, LlamaModel } from 'node-llama-cpp';
import type { LoadOptions } from '../common/engine-protocol.js';
import { metadataArrayLength, type GgufHeader } from '../common/gguf/header-reader.js';
import { isQuantizedKv } from '../common/rebuild.js';
import { EngineError } from './engine-error.js';
import type { Slot } from './slot.js';

export interface LoadedModel {
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  readonly slots: Slot[];
  readonly header: GgufHeader;
  readonly options: LoadOptions;
  /** Tokens in the model's vocabulary, from the header (ids at or above it are refused). */
  readonly vocabularySize: number;
}

export const vocabularySize = (header: GgufHeader): number => metadataArrayLength(header.metadata.get('tokenizer.ggml.tokens'));

/** llama.cpp quantizes the V cache only with flash attention; say so instead of failing inside it. */
export function checkKvType(options: LoadOptions): void {
  if (isQuantizedKv(options.kvType) && options.flashAttention === false) {
    throw new EngineError('load_failed', `KV type ${options.kvType} needs flashAttention: true (llama.cpp quantizes the V cache only with flash attention)`);
  }
}

export function createContext(model: LlamaModel, options: LoadOptions): Promise<LlamaContext> {
  const kvType = options.kvType.toUpperCase() as 'F32' | 'F16' | 'Q8_0' | 'Q4_0';
  return model.createContext({
    contextSize: options.contextSize,
    sequences: options.slots,
    ...(options.threads ? { threads: options.threads } : {}),
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    flashAttention: options.flashAttention,
    // Prompts served in the order they came, as llama-server serves them (docs/ARCHITECTURE.md, "Batch order").
    batching: { itemPrioritizationStrategy: 'firstInFirstOut' },
    experimentalKvCacheKeyType: kvType,
    experimentalKvCacheValueType: kvType,
    failedCreationRemedy: false,
  });
}
