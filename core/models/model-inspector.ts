/**
 * What the loader shows of a model before loading it: the bounded header reader's view of the file
 * (name, architecture, parameters, the dominant tensor type, context length, layers, size) and, per card
 * group the chosen replica count would make (or the CPU's RAM), whether one replica fits. node-llama-cpp's
 * GgufInsights is not used here: its reader runs unbounded in the main process (DESIGN §2); the engine's
 * own pre-check with node-llama-cpp's estimates still guards the real load.
 */
import os from 'node:os';
import type { ModelInspection } from '../../common/contract.js';
import type { LayoutSuggestion } from '../../common/model-library.js';
import { readModelFileHeader } from '../../common/node/gguf-file.js';
import { metadataNumber, metadataText, type GgufHeader } from '../../common/gguf/header-reader.js';
import { ENGINE_RUNTIME_BYTES, kvCacheBytes } from '../arena/engine-memory.js';
import type { NvmlCard } from '../../native/nvml.js';
import { cardGroups, GPU_OVERHEAD, suggestLayout } from './layout-suggestion.js';

export interface InspectPlan {
  replicas: number;
  contextSize: number;
  slots: number;
}

/** The tensor type that holds most of the bytes (a model's quantisation as people name it). */
function dominantType(header: GgufHeader): string {
  const bytes = new Map<string, number>();
  for (const t of header.tensors) bytes.set(t.typeName, (bytes.get(t.typeName) ?? 0) + t.bytes);
  return [...bytes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]?.toUpperCase() ?? 'unknown';
}

/** What a header says of its model, as the loader and the library show it. */
export function modelFacts(
  header: GgufHeader,
): Pick<ModelInspection, 'name' | 'architecture' | 'parameters' | 'quantisation' | 'contextLength' | 'layers'> & { weightsBytes: number } {
  const architecture = metadataText(header, 'general.architecture');
  return {
    name: metadataText(header, 'general.name'),
    architecture,
    parameters: header.tensors.reduce((sum, t) => sum + t.dims.reduce((p, d) => p * d, 1), 0),
    quantisation: dominantType(header),
    contextLength: architecture ? metadataNumber(header, `${architecture}.context_length`) : null,
    layers: architecture ? metadataNumber(header, `${architecture}.block_count`) : null,
    weightsBytes: header.tensors.reduce((sum, t) => sum + t.bytes, 0),
  };
}

export async function inspectModel(path: string, plan: InspectPlan, cards: readonly NvmlCard[] | null): Promise<ModelInspection> {
  const header = await readModelFileHeader(path);
  const { weightsBytes: weights, ...facts } = modelFacts(header);
  const kv = kvCacheBytes(header, { contextSize: plan.contextSize, slots: plan.slots, kvType: 'f16' }) ?? 0;
  const fits: ModelInspection['fits'] = [];
  if (cards && cards.length > 0 && cards.length % plan.replicas === 0) {
    for (const [g, group] of cardGroups(cards, plan.replicas).entries()) {
      const needBytes = Math.ceil((weights + kv) * GPU_OVERHEAD);
      const freeBytes = group.reduce((sum, c) => sum + c.memoryTotalBytes - c.memoryUsedBytes, 0);
      fits.push({
        group: `replica ${g}: cards ${group.map((c) => c.index).join(', ')}`,
        cards: group.map((c) => c.index),
        needBytes,
        freeBytes,
        fits: needBytes <= freeBytes,
      });
    }
  } else {
    // CPU engines map the file (the page cache shares it): weights once, each engine's KV and runtime on top.
    const needBytes = weights + plan.replicas * (kv + ENGINE_RUNTIME_BYTES);
    const freeBytes = os.freemem();
    fits.push({ group: `CPU (RAM), ${plan.replicas} replica${plan.replicas === 1 ? '' : 's'}`, cards: [], needBytes, freeBytes, fits: needBytes <= freeBytes });
  }
  return {
    path,
    fileBytes: header.fileSize,
    ...facts,
    fits,
  };
}

/** The layout the loader suggests for the model of `header` on these cards (null or none: CPU engines). */
export function suggestLayoutFor(header: GgufHeader, cards: readonly NvmlCard[] | null): LayoutSuggestion {
  const { weightsBytes, contextLength } = modelFacts(header);
  return suggestLayout({
    weightsBytes,
    contextLength,
    kvBytes: (contextSize, slots) => kvCacheBytes(header, { contextSize, slots, kvType: 'f16' }) ?? 0,
    cardsFreeBytes: cards?.map((c) => c.memoryTotalBytes - c.memoryUsedBytes) ?? null,
    freeRamBytes: os.freemem(),
    engineRuntimeBytes: ENGINE_RUNTIME_BYTES,
  });
}
