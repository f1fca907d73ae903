/**
 * The rebuild pre-check (DESIGN §5.1): node-llama-cpp's resource estimates for the touched pools at the
 * new sizes, against what is free now plus what those pools give back when they are freed (their own
 * estimate at the current sizes). Nothing is allocated or freed. RAM is compared without swap: a KV
 * cache in swap serves too slowly to count as fitting.
 */
import { GgmlType, type Llama, type LlamaModel } from 'node-llama-cpp';
import { formatBytes } from '../common/format-bytes.js';
import type { KvType, Pool, PoolSizes, PrecheckVerdict } from '../common/rebuild.js';

const GGML_KV_TYPES: Record<KvType, GgmlType> = { f32: GgmlType.F32, f16: GgmlType.F16, q8_0: GgmlType.Q8_0, q4_0: GgmlType.Q4_0 };

interface Need {
  ram: number;
  vram: number;
}

export interface PrecheckInput {
  llama: Llama;
  model: LlamaModel;
  /** What the pools hold now (gpuLayers as the model really loaded them). */
  current: PoolSizes & { gpuLayers: number; flashAttention: 'auto' | boolean; batchSize?: number | undefined };
  target: PoolSizes;
  pools: readonly Pool[];
}

export async function precheck({ llama, model, current, target, pools }: PrecheckInput): Promise<PrecheckVerdict> {
  const insights = model.fileInsights;
  // `auto` layers are fitted by node-llama-cpp at load; the estimate takes the layers loaded now. A CPU build offloads none.
  const targetLayers = llama.gpu === false ? 0 : target.gpuLayers === 'auto' ? current.gpuLayers : target.gpuLayers;
  const contextNeed = async (sizes: PoolSizes, gpuLayers: number): Promise<Need> => {
    const estimate = await insights.estimateContextResourceRequirementsV2({
      contextSize: sizes.contextSize,
      sequences: sizes.slots,
      modelGpuLayers: gpuLayers,
      flashAttention: current.flashAttention,
      ...(current.batchSize ? { batchSize: current.batchSize } : {}),
      kvCacheKeyType: GGML_KV_TYPES[sizes.kvType],
      kvCacheValueType: GGML_KV_TYPES[sizes.kvType],
    });
    return { ram: estimate.cpuRam, vram: estimate.gpuVram };
  };
  const weightsNeed = async (gpuLayers: number): Promise<Need> => {
    const estimate = await insights.estimateModelResourceRequirementsV2({ gpuLayers });
    return { ram: estimate.cpuRam, vram: estimate.gpuVram };
  };
  const weights = pools.includes('weights');
  const needed = add(await contextNeed(target, targetLayers), weights ? await weightsNeed(targetLayers) : ZERO);
  const givenBack = add(await contextNeed(current, current.gpuLayers), weights ? await weightsNeed(current.gpuLayers) : ZERO);
  const [ram, vram] = await Promise.all([llama.getRamState(), llama.getVramState()]);
  const available = { ram: ram.free + givenBack.ram, vram: vram.free + givenBack.vram };
  const shortfall = { ram: Math.max(0, needed.ram - available.ram), vram: Math.max(0, needed.vram - available.vram) };
  const fits = shortfall.ram === 0 && shortfall.vram === 0;
  return { fits, pools: [...pools], needed, available, shortfall, reason: describe(fits, needed, available, shortfall, givenBack, target) };
}

const ZERO: Need = { ram: 0, vram: 0 };
const add = (a: Need, b: Need): Need => ({ ram: a.ram + b.ram, vram: a.vram + b.vram });

function describe(fits: boolean, needed: Need, available: Need, shortfall: Need, givenBack: Need, target: PoolSizes): string {
  const sizes = `${target.slots} slots × ${target.contextSize} tokens (${target.kvType} KV), ${target.gpuLayers} GPU layers`;
  const part = (kind: 'RAM' | 'VRAM', key: keyof Need): string =>
    `${kind}: needs ${formatBytes(needed[key])}, ${formatBytes(available[key])} available (free plus ${formatBytes(givenBack[key])} given back)` +
    (shortfall[key] > 0 ? `, short by ${formatBytes(shortfall[key])} (${Math.ceil(shortfall[key])} bytes)` : '');
  const parts = [part('RAM', 'ram'), ...(needed.vram > 0 || shortfall.vram > 0 ? [part('VRAM', 'vram')] : [])];
  return `${fits ? 'fits' : 'does not fit'}: ${sizes}; ${parts.join('; ')}`;
}
