/**
 * The performance models of the SIMULATED engines (simulated-engine.ts), each named for the engine it stands
 * for. `h100Llama8b`: Llama-3.1-8B-Instruct (8.03 B parameters in BF16, 32 layers × 8 KV heads × 128: 128 KiB of
 * KV per token) on one H100 SXM (989 TFLOPS dense BF16, 3.35 TB/s HBM3: NVIDIA's datasheet), as a roofline: a
 * prefilled token costs 2 × 8.03 GFLOP at 50% of peak (32.5 µs); a step reads the weights once at 80% of the
 * bandwidth (6.0 ms) and each decoding sequence's KV (0.049 µs per token of context); restores come over PCIe 5
 * from RAM (~50 GB/s: 2.6 µs per token) and from NVMe (~6 GB/s: 22 µs per token). 32 sequences at once and
 * 2,048-token prefill chunks (vLLM's defaults); a 64 GiB RAM tier and a 512 GiB disk tier per replica.
 * `thisMachine`: the bench model on this machine's CPU, fitted by bench/simulate.ts from a real engine.
 */
import type { PerformanceModel } from './simulated-engine.js';

export const h100Llama8b: PerformanceModel = {
  name: 'Llama-3.1-8B on H100 (roofline)',
  slots: 32,
  chunkTokens: 2048,
  prefillOrder: 'oldest',
  stepMs: (prefill, _decoders, context) => 6.0 + 0.0325 * prefill + 0.000049 * context,
  restoreMsPerToken: { ram: 0.0026, disk: 0.022 },
  kvBytesPerToken: 131_072,
  ramBytes: 64 * 2 ** 30,
  diskBytes: 512 * 2 ** 30,
};

/** Requests per second one replica sustains under `model` for a mean request (`hit` of its prompt cached): its prefill, and its share of full-batch decode. */
export function replicaCapacity(model: PerformanceModel, promptTokens: number, outputTokens: number, hit: number): number {
  const prefillMs = model.stepMs(promptTokens * (1 - hit), 0, 0) - model.stepMs(0, 0, 0);
  const decodeStepMs = model.stepMs(0, model.slots, model.slots * (promptTokens + outputTokens / 2));
  return 1000 / (prefillMs + (outputTokens * decodeStepMs) / model.slots);
}
