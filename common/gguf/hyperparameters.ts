/**
 * The hyper-parameter bounds llama.cpp asserts on, checked on the bounded header reader's view of a model
 * before any native code reads it: a failed GGML_ASSERT aborts the whole process, so these values must
 * never reach llama.cpp. The rules follow llama.cpp's `load_hparams` (src/llama-model.cpp) for the
 * architecture named by `general.architecture`; each refusal names the key, its value and the bound.
 * Values llama.cpp refuses with an ordinary error (a tensor of the wrong shape) are left to it.
 */
import { GgufFormatError, metadataArrayLength, metadataText, type GgufHeader } from './header-reader.js';

/** llama.cpp's LLAMA_MAX_LAYERS and LLAMA_MAX_EXPERTS (src/llama-hparams.h). */
export const LLAMA_MAX_LAYERS = 512;
export const LLAMA_MAX_EXPERTS = 1024;

/** Architectures without attention (llama.cpp's llm_arch_is_recurrent): their head counts are 0. */
const RECURRENT_ARCHITECTURES = new Set(['mamba', 'mamba2', 'rwkv6', 'rwkv6qwen2', 'rwkv7', 'arwkv7']);

/** Architectures mixing attention with recurrent layers (llm_arch_is_hybrid): a per-layer count may be 0. */
const HYBRID_ARCHITECTURES = new Set([
  'jamba',
  'falcon-h1',
  'plamo2',
  'granitehybrid',
  'lfm2',
  'lfm2moe',
  'nemotron_h',
  'nemotron_h_moe',
  'qwen3next',
  'kimi-linear',
  'bailingmoe3',
  'kimi-k3',
  'qwen35',
  'qwen35moe',
  'qwen4exp',
  'deepseek4',
  'minimax-01',
]);

/** The names llama.cpp accepts for `<arch>.rope.scaling.type` (any other aborts). */
const ROPE_SCALING_TYPES = ['none', 'linear', 'yarn', 'longrope'];

function refuse(message: string): never {
  throw new GgufFormatError('invalid', message);
}

/** One value of a count key, for messages: `key = v` or `key[i] = v`. */
interface Count {
  label: string;
  value: number;
}

/**
 * The values of a count key: one for a scalar, one per layer for an array (which must have `layers`
 * items, as llama.cpp requires); null when the key is absent.
 */
function counts(header: GgufHeader, key: string, layers: number | null): Count[] | null {
  const value = header.metadata.get(key);
  if (value === undefined) return null;
  if (typeof value === 'object' && !Array.isArray(value))
    refuse(`${key} has ${value.length} items; a per-layer array has one per layer (at most ${LLAMA_MAX_LAYERS})`);
  const items = Array.isArray(value) ? value : [value];
  if (Array.isArray(value) && layers !== null && value.length !== layers) refuse(`${key} has ${value.length} items, but the model has ${layers} layers`);
  return items.map((item, i) => {
    const label = Array.isArray(value) ? `${key}[${i}]` : key;
    const n = typeof item === 'bigint' ? Number(item) : item;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) refuse(`${label} = ${String(item)} is not a count (a non-negative integer)`);
    return { label, value: n };
  });
}

/** A scalar count key; null when absent. */
function count(header: GgufHeader, key: string): number | null {
  const values = counts(header, key, null);
  if (values === null) return null;
  if (values.length !== 1) refuse(`${key} must be a single number, not an array`);
  return values[0]!.value;
}

function atLeastOne(values: readonly Count[], allowZero: boolean): void {
  for (const { label, value } of values) if (value < 1 && !allowZero) refuse(`${label} = ${value} must be at least 1`);
}

/** Throws GgufFormatError naming the first hyper-parameter that would trip one of llama.cpp's asserts. */
export function checkHyperparameters(header: GgufHeader): void {
  const arch = metadataText(header, 'general.architecture');
  if (arch === null) refuse('general.architecture is missing (llama.cpp needs it to read the model)');
  const key = (name: string): string => `${arch}.${name}`;

  if (metadataArrayLength(header.metadata.get('tokenizer.ggml.tokens')) === 0) refuse('tokenizer.ggml.tokens is missing or empty: the model has no vocabulary');

  const layers = count(header, key('block_count'));
  if (layers === null) refuse(`${key('block_count')} is missing`);
  if (layers < 1 || layers > LLAMA_MAX_LAYERS) refuse(`${key('block_count')} = ${layers} is outside 1..${LLAMA_MAX_LAYERS} (llama.cpp's LLAMA_MAX_LAYERS)`);
  const nextn = count(header, key('nextn_predict_layers'));
  if (nextn !== null && nextn > layers) refuse(`${key('nextn_predict_layers')} = ${nextn} is more than ${key('block_count')} = ${layers}`);

  const embedding = count(header, key('embedding_length'));
  if (embedding === null) refuse(`${key('embedding_length')} is missing`);
  if (embedding < 1) refuse(`${key('embedding_length')} = ${embedding} must be at least 1`);
  const context = count(header, key('context_length'));
  if (context !== null && context < 1) refuse(`${key('context_length')} = ${context} must be at least 1`);

  const experts = checkExperts(header, key, layers);

  const scaling = header.metadata.get(key('rope.scaling.type'));
  if (scaling !== undefined && !(typeof scaling === 'string' && ROPE_SCALING_TYPES.includes(scaling))) {
    refuse(`${key('rope.scaling.type')} = ${JSON.stringify(scaling)} is not one of ${ROPE_SCALING_TYPES.join(', ')}`);
  }

  if (RECURRENT_ARCHITECTURES.has(arch)) return;
  const hybrid = HYBRID_ARCHITECTURES.has(arch);
  const heads = counts(header, key('attention.head_count'), layers);
  if (heads === null) refuse(`${key('attention.head_count')} is missing`);
  atLeastOne(heads, hybrid && heads.length > 1);
  const kvHeads = counts(header, key('attention.head_count_kv'), layers) ?? heads;
  atLeastOne(kvHeads, hybrid && kvHeads.length > 1);
  for (let layer = 0; layer < layers; layer++) {
    const h = heads[Math.min(layer, heads.length - 1)]!;
    const kv = kvHeads[Math.min(layer, kvHeads.length - 1)]!;
    if (kv.value > 0 && h.value % kv.value !== 0) refuse(`${kv.label} = ${kv.value} does not divide ${h.label} = ${h.value}`);
  }
  // A mixture-of-experts model's feed-forward sizes are its experts'; a dense one's must be real.
  const feedForward = counts(header, key('feed_forward_length'), layers);
  if (feedForward !== null && experts === 0) atLeastOne(feedForward, hybrid && feedForward.length > 1);
}

/** llama.cpp's expert asserts; returns the expert count (0 for a dense model). */
function checkExperts(header: GgufHeader, key: (name: string) => string, layers: number): number {
  const experts = count(header, key('expert_count')) ?? 0;
  const used = counts(header, key('expert_used_count'), layers) ?? [];
  const groups = count(header, key('expert_group_count')) ?? 0;
  const groupsUsed = count(header, key('expert_group_used_count')) ?? 0;
  const expertsLabel = `${key('expert_count')} = ${experts}`;
  if (experts > LLAMA_MAX_EXPERTS) refuse(`${expertsLabel} is more than ${LLAMA_MAX_EXPERTS} (llama.cpp's LLAMA_MAX_EXPERTS)`);
  for (const u of used) if (u.value > experts) refuse(`${u.label} = ${u.value} is more than ${expertsLabel}`);
  if (experts === 0) {
    if (groups !== 0) refuse(`${key('expert_group_count')} = ${groups} needs experts, but ${expertsLabel}`);
    return 0;
  }
  if (!used.some((u) => u.value > 0)) refuse(`${expertsLabel} needs ${key('expert_used_count')} of at least 1`);
  if (groups >= experts) refuse(`${key('expert_group_count')} = ${groups} must be less than ${expertsLabel}`);
  if (groups > 1) {
    if (experts % groups !== 0) refuse(`${key('expert_group_count')} = ${groups} does not divide ${expertsLabel}`);
    if (groupsUsed < 1 || groupsUsed >= groups)
      refuse(`${key('expert_group_used_count')} = ${groupsUsed} is outside 1..${groups - 1} (${key('expert_group_count')} = ${groups})`);
  }
  return experts;
}
