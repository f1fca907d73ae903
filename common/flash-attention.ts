/**
 * What a replica's `flashAttention: 'auto'` means (the default of both engine kinds): off where the model
 * runs on the CPU (no layer on a GPU) with a KV cache that is not quantized, and llama.cpp's own `auto`
 * everywhere else; `true` and `false` are kept as given. llama.cpp's `auto` turns flash attention on
 * wherever the backend has it, the CPU included, a default made for GPUs: on a CPU its kernel decodes
 * 20–30% slower than plain attention, and a llama-server built for the machine prefills a batch of 2–63
 * tokens (a short follow-up in a chat) 3–5× slower (docs/BENCHMARKS.md, "Session 16"; on Arm Neoverse V
 * cores llama.cpp's issue #27086 measures it halving prefill). A quantized KV cache needs flash attention,
 * so it keeps `auto`.
 */
import type { LoadOptions } from './engine-protocol.js';

export function flashAttentionFor(load: Pick<LoadOptions, 'flashAttention' | 'gpuLayers' | 'kvType'>): LoadOptions['flashAttention'] {
  if (load.flashAttention !== 'auto') return load.flashAttention;
  return load.gpuLayers === 0 && !load.kvType.startsWith('q') ? false : 'auto';
}
