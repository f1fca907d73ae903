/** What `flashAttention: 'auto'` resolves to for a load: off on the CPU with an unquantized KV cache, llama.cpp's auto elsewhere. */
import { describe, expect, it } from 'vitest';
import { flashAttentionFor } from '../../common/flash-attention.js';

describe('flashAttentionFor', () => {
  it('turns auto off where every layer is on the CPU and the KV cache is f16 or f32', () => {
    expect(flashAttentionFor({ flashAttention: 'auto', gpuLayers: 0, kvType: 'f16' })).toBe(false);
    expect(flashAttentionFor({ flashAttention: 'auto', gpuLayers: 0, kvType: 'f32' })).toBe(false);
  });

  it("leaves auto to llama.cpp where layers may be on a GPU, or where a quantized KV cache needs flash attention", () => {
    expect(flashAttentionFor({ flashAttention: 'auto', gpuLayers: 'auto', kvType: 'f16' })).toBe('auto');
    expect(flashAttentionFor({ flashAttention: 'auto', gpuLayers: 40, kvType: 'f16' })).toBe('auto');
    expect(flashAttentionFor({ flashAttention: 'auto', gpuLayers: 0, kvType: 'q8_0' })).toBe('auto');
    expect(flashAttentionFor({ flashAttention: 'auto', gpuLayers: 0, kvType: 'q4_0' })).toBe('auto');
  });

  it('keeps an explicit choice as given', () => {
    expect(flashAttentionFor({ flashAttention: true, gpuLayers: 0, kvType: 'f16' })).toBe(true);
    expect(flashAttentionFor({ flashAttention: false, gpuLayers: 'auto', kvType: 'f16' })).toBe(false);
  });
});
