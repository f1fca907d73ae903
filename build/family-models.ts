/**
 * Family test models: the test-model maker's random llama-architecture weights grafted with a REAL
 * vocabulary and a REAL chat template from llama.cpp's source (build/llama-cpp-source.ts), one per model
 * family: every `tokenizer.*` key of a vocab-only `models/ggml-vocab-<vocab>.gguf` (types kept) and the text
 * of `models/templates/<template>.jinja` as `tokenizer.chat_template`. Their text is noise, but prompts
 * tokenize, templates render and control tokens parse as the real family's do. Narrow (64 wide, 2 layers),
 * because real vocabularies are 32k–262k tokens; generated on demand into the model cache, never committed.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GgufTokenType } from '../common/gguf/format.js';
import { DEFAULT_GGUF_READ_LIMITS, readGgufHeader, type GgufHeader } from '../common/gguf/header-reader.js';
import { gguf, ggufCopy, type GgufWriteValue } from './gguf-writer.js';
import { ensureLlamaCppSource, templatePath, vocabPath } from './llama-cpp-source.js';
import { WRITER_VERSION, describeLlamaModel, modelCacheDir, writeModelFile, type ModelDescription, type TestModelSpec } from './test-model.js';

/** The shape of every family model: the tiny model's architecture, narrower, since the vocabulary dominates its size. */
export const FAMILY_MODEL_SPEC: Readonly<TestModelSpec> = {
  seed: 5,
  layers: 2,
  width: 64,
  heads: 4,
  kvHeads: 2,
  feedForward: 128,
  contextLength: 4096,
  tensorType: 'f16',
};

/** Bumped whenever the bytes this file writes for a family change (the test-model writer's version is keyed too). */
const FAMILY_WRITER_VERSION = 1;

const numbered = (first: number, texts: readonly string[]): Readonly<Record<number, string>> => Object.fromEntries(texts.map((text, i) => [first + i, text]));

/**
 * Tokens a family's real tokenizer has where llama.cpp's test vocab of the same lineage holds a placeholder
 * (Qwen1.5's `[PAD…]`, Llama 3's `<|reserved_special_token_…|>`): written over those slots at the real ids.
 */
const ADDED_TOKENS = {
  // Qwen2.5's added tokens (151646–151664) and Qwen3's (151665–151668).
  qwen3: numbered(151646, [
    '<|object_ref_start|>',
    '<|object_ref_end|>',
    '<|box_start|>',
    '<|box_end|>',
    '<|quad_start|>',
    '<|quad_end|>',
    '<|vision_start|>',
    '<|vision_end|>',
    '<|vision_pad|>',
    '<|image_pad|>',
    '<|video_pad|>',
    '<tool_call>',
    '</tool_call>',
    '<|fim_prefix|>',
    '<|fim_middle|>',
    '<|fim_suffix|>',
    '<|fim_pad|>',
    '<|repo_name|>',
    '<|file_sep|>',
    '<tool_response>',
    '</tool_response>',
    '<think>',
    '</think>',
  ]),
  // Llama 3.1's (also 3.2's and 3.3's) renamed reserved tokens.
  'llama3.1': { 128004: '<|finetune_right_pad_id|>', 128008: '<|eom_id|>', 128010: '<|python_tag|>' },
} satisfies Record<string, Readonly<Record<number, string>>>;

const PLACEHOLDER_TOKEN = /^(\[PAD\d+\]|<\|reserved_special_token_\d+\|>)$/;

export interface FamilyModel {
  /** A file of llama.cpp's `models/templates`, without `.jinja`. */
  template: string;
  /** A vocab of llama.cpp's `models/ggml-vocab-<vocab>.gguf`. */
  vocab: string;
  added?: keyof typeof ADDED_TOKENS;
}

// Where no test vocab is the family's own, qwen2 stands in for a ChatML family (it has <|im_start|> and
// <|im_end|> as control tokens) and llama-bpe (byte-level, tiktoken-derived) for the others.
/** The families, by the short name a user types: every chat template in llama.cpp's models/templates. */
export const FAMILY_MODELS = {
  'qwen2.5': { template: 'Qwen-Qwen2.5-7B-Instruct', vocab: 'qwen2', added: 'qwen3' },
  qwen3: { template: 'Qwen-Qwen3-0.6B', vocab: 'qwen2', added: 'qwen3' },
  qwq: { template: 'Qwen-QwQ-32B', vocab: 'qwen2', added: 'qwen3' },
  'qwen3-coder': { template: 'Qwen3-Coder', vocab: 'qwen2', added: 'qwen3' },
  'qwen3.5': { template: 'Qwen3.5-4B', vocab: 'qwen35', added: 'qwen3' }, // the test vocab: qwen2's tokens, Qwen3.5's pre-tokenizer
  'mimo-vl': { template: 'MiMo-VL', vocab: 'qwen2', added: 'qwen3' }, // MiMo's vocab is Qwen2.5's
  'deepseek-r1-distill-qwen': { template: 'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B', vocab: 'qwen2' }, // its DeepSeek markers are not in the test vocab
  'llama3.1': { template: 'meta-llama-Llama-3.1-8B-Instruct', vocab: 'llama-bpe', added: 'llama3.1' },
  'llama3.2': { template: 'meta-llama-Llama-3.2-3B-Instruct', vocab: 'llama-bpe', added: 'llama3.1' },
  'llama3.3': { template: 'meta-llama-Llama-3.3-70B-Instruct', vocab: 'llama-bpe', added: 'llama3.1' },
  'hermes2-pro-tools': { template: 'NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use', vocab: 'llama-bpe' }, // its ChatML markers are text here
  'hermes3-tools': { template: 'NousResearch-Hermes-3-Llama-3.1-8B-tool_use', vocab: 'llama-bpe', added: 'llama3.1' }, // its ChatML markers are text here
  'functionary-v3.1': { template: 'meetkai-functionary-medium-v3.1', vocab: 'llama-bpe', added: 'llama3.1' },
  'functionary-v3.2': { template: 'meetkai-functionary-medium-v3.2', vocab: 'llama-bpe' },
  'firefunction-v2': { template: 'fireworks-ai-llama-3-firefunction-v2', vocab: 'llama-bpe' },
  'deepseek-r1-distill-llama': { template: 'deepseek-ai-DeepSeek-R1-Distill-Llama-8B', vocab: 'llama-bpe' }, // its DeepSeek markers are not in the test vocab
  'deepseek-r1': { template: 'llama-cpp-deepseek-r1', vocab: 'deepseek-llm' },
  'deepseek-v3.1': { template: 'deepseek-ai-DeepSeek-V3.1', vocab: 'deepseek-llm' },
  'deepseek-v3.2': { template: 'deepseek-ai-DeepSeek-V3.2', vocab: 'deepseek-llm' },
  'deepseek-v4': { template: 'deepseek-ai-DeepSeek-V4', vocab: 'deepseek-llm' },
  'deepseek-v4-flash': { template: 'deepseek-ai-DeepSeek-V4-Flash-0731', vocab: 'deepseek-llm' },
  'phi-3.5': { template: 'microsoft-Phi-3.5-mini-instruct', vocab: 'phi-3' },
  gemma2: { template: 'google-gemma-2-2b-it', vocab: 'gemma-4' }, // the only Gemma vocab; <start_of_turn> is text here
  gemma4: { template: 'google-gemma-4-31B-it', vocab: 'gemma-4' },
  'gemma4-interleaved': { template: 'google-gemma-4-31B-it-interleaved', vocab: 'gemma-4' },
  'command-r-plus-tools': { template: 'CohereForAI-c4ai-command-r-plus-tool_use', vocab: 'command-r' },
  'command-r7b': { template: 'CohereForAI-c4ai-command-r7b-12-2024-tool_use', vocab: 'command-r' }, // its thinking and action markers are text here
  'cohere2-moe': { template: 'Cohere2MoE', vocab: 'command-r' },
  'granite-3.3': { template: 'ibm-granite-granite-3.3-2B-Instruct', vocab: 'starcoder' }, // Granite 3's 49k byte-level BPE is StarCoder's
  'granite-4.0': { template: 'ibm-granite-granite-4.0', vocab: 'llama-bpe' },
  'granite-4.1': { template: 'ibm-granite-granite-4.1', vocab: 'llama-bpe' },
  'mistral-small-3.2': { template: 'Mistral-Small-3.2-24B-Instruct-2506', vocab: 'llama-bpe' }, // no Tekken test vocab; [INST] and the like are text here
  'mistral-nemo': { template: 'mistralai-Mistral-Nemo-Instruct-2407', vocab: 'llama-bpe' },
  'ministral-3-reasoning': { template: 'mistralai-Ministral-3-14B-Reasoning-2512', vocab: 'llama-bpe' },
  'devstral-small': { template: 'unsloth-mistral-Devstral-Small-2507', vocab: 'llama-bpe' },
  'apriel-1.5': { template: 'unsloth-Apriel-1.5', vocab: 'llama-bpe' },
  'apriel-1.6-thinker': { template: 'Apriel-1.6-15b-Thinker-fixed', vocab: 'llama-bpe' },
  apertus: { template: 'Apertus-8B-Instruct', vocab: 'llama-bpe' },
  'gpt-oss': { template: 'openai-gpt-oss-120b', vocab: 'llama-bpe' }, // no o200k test vocab; the harmony markers are text here
  'muse-glimmer': { template: 'muse-glimmer', vocab: 'llama-bpe' },
  'nemotron-nano-v2': { template: 'NVIDIA-Nemotron-Nano-v2', vocab: 'llama-bpe' },
  'nemotron-3-nano': { template: 'NVIDIA-Nemotron-3-Nano-30B-A3B-BF16', vocab: 'qwen2' },
  smollm3: { template: 'HuggingFaceTB-SmolLM3-3B', vocab: 'qwen2' }, // SmolLM3's vocab is Llama 3's with ChatML over reserved ids
  'bielik-11b-v3': { template: 'Bielik-11B-v3.0-Instruct', vocab: 'qwen2' },
  lfm2: { template: 'LFM2-8B-A1B', vocab: 'qwen2' },
  'lfm2.5': { template: 'LFM2.5-8B-A1B', vocab: 'qwen2' },
  'lfm2.5-instruct': { template: 'LFM2.5-Instruct', vocab: 'qwen2' },
  minicpm5: { template: 'openbmb-MiniCPM5-1B', vocab: 'qwen2' },
  'stepfun3.5-flash': { template: 'StepFun3.5-Flash', vocab: 'qwen2' },
  'seed-oss': { template: 'ByteDance-Seed-OSS', vocab: 'qwen2' },
  'glm-4.6': { template: 'GLM-4.6', vocab: 'qwen2' },
  'glm-4.7-flash': { template: 'GLM-4.7-Flash', vocab: 'qwen2' },
  'kimi-k2': { template: 'moonshotai-Kimi-K2', vocab: 'qwen2' },
  'kimi-k2-instruct': { template: 'Kimi-K2-Instruct', vocab: 'qwen2' },
  'kimi-k2-thinking': { template: 'Kimi-K2-Thinking', vocab: 'qwen2' },
  'kimi-k3': { template: 'Kimi-K3', vocab: 'qwen2' },
  'minimax-m1': { template: 'MiniMax-M1', vocab: 'qwen2' },
  'minimax-m2': { template: 'MiniMax-M2', vocab: 'qwen2' },
  'minimax-m3': { template: 'MiniMax-M3', vocab: 'qwen2' },
  gigachat3: { template: 'GigaChat3-10B-A1.8B', vocab: 'qwen2' },
  'gigachat3.1': { template: 'GigaChat3.1-10B-A1.8B', vocab: 'qwen2' },
  'reka-edge': { template: 'Reka-Edge', vocab: 'qwen2' },
  hy3: { template: 'tencent-Hy3', vocab: 'qwen2' },
  'solar-open': { template: 'upstage-Solar-Open-100B', vocab: 'qwen2' },
  'laguna-s-2.1': { template: 'poolside-Laguna-S-2.1', vocab: 'qwen2' },
  'laguna-xs-2.1': { template: 'poolside-Laguna-XS-2.1', vocab: 'qwen2' },
  'laguna-xs.2': { template: 'poolside-Laguna-XS.2', vocab: 'qwen2' },
  'rwkv-world': { template: 'llama-cpp-rwkv-world', vocab: 'qwen2' }, // no RWKV test vocab
} as const satisfies Record<string, FamilyModel>;

export type FamilyName = keyof typeof FAMILY_MODELS;

export function isFamilyName(name: string): name is FamilyName {
  return Object.hasOwn(FAMILY_MODELS, name);
}

/** GPT-2's byte-level BPE alphabet backwards: the code point each byte is written as → that byte. */
const GPT2_BYTE_OF_CHAR: ReadonlyMap<number, number> = (() => {
  const map = new Map<number, number>();
  let next = 256;
  for (let byte = 0; byte < 256; byte++) {
    const printable = (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
    map.set(printable ? byte : next++, byte);
  }
  return map;
})();

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Whether a byte-level BPE token's text stands for bytes that are whole UTF-8 on their own. */
function gpt2TokenIsUtf8(text: string): boolean {
  const bytes: number[] = [];
  for (const char of text) {
    const byte = GPT2_BYTE_OF_CHAR.get(char.codePointAt(0)!);
    if (byte === undefined) return false;
    bytes.push(byte);
  }
  try {
    strictUtf8.decode(new Uint8Array(bytes));
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a family model must never sample this token (`tokenizerModel` is `tokenizer.ggml.model`): byte
 * tokens, unused and unknown ones, and — in a byte-level BPE vocab (`gpt2`) — a normal token whose bytes are
 * not valid UTF-8 on their own. Control and user-defined tokens are kept: llama.cpp prints their text as is.
 */
export function isUnsamplableToken(tokenizerModel: string, text: string, type: number): boolean {
  if (type === GgufTokenType.BYTE || type === GgufTokenType.UNUSED || type === GgufTokenType.UNKNOWN) return true;
  return type === GgufTokenType.NORMAL && tokenizerModel === 'gpt2' && !gpt2TokenIsUtf8(text);
}

/** A vocab-only GGUF's header with every array kept whole (a trusted file of llama.cpp's source). */
function readVocabHeader(bytes: Uint8Array): Promise<GgufHeader> {
  return readGgufHeader(
    { size: bytes.length, read: async (offset, length) => bytes.subarray(offset, offset + length) },
    { ...DEFAULT_GGUF_READ_LIMITS, keepArrayItems: Number.MAX_SAFE_INTEGER },
  );
}

function stringArray(header: GgufHeader, key: string): string[] {
  const value = header.metadata.get(key);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new Error(`the vocab has no string array ${key}`);
  return value;
}

function numberArray(header: GgufHeader, key: string): number[] {
  const value = header.metadata.get(key);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'number')) throw new Error(`the vocab has no number array ${key}`);
  return value;
}

/** The family model over its vocab file's bytes and its template's text. */
export async function describeFamilyModel(family: FamilyName, template: string, vocabBytes: Uint8Array): Promise<ModelDescription> {
  const entry: FamilyModel = FAMILY_MODELS[family];
  const header = await readVocabHeader(vocabBytes);
  const tokenizerModel = header.metadata.get('tokenizer.ggml.model');
  if (typeof tokenizerModel !== 'string') throw new Error(`vocab ${entry.vocab} has no tokenizer.ggml.model`);
  const tokens = [...stringArray(header, 'tokenizer.ggml.tokens')];
  const types = [...numberArray(header, 'tokenizer.ggml.token_type')];
  for (const [id, text] of Object.entries(entry.added ? ADDED_TOKENS[entry.added] : {})) {
    const slot = Number(id);
    if (!PLACEHOLDER_TOKEN.test(tokens[slot] ?? '')) throw new Error(`vocab ${entry.vocab} has ${tokens[slot]} at ${slot}, not a placeholder for ${text}`);
    tokens[slot] = text;
    // As llama.cpp's converter types an added token: control when it looks special, else user-defined.
    types[slot] = /^<\|.*\|>$/.test(text) ? GgufTokenType.CONTROL : GgufTokenType.USER_DEFINED;
  }

  const metadata: [string, GgufWriteValue][] = [];
  for (const [key, value] of header.metadata) {
    if (!key.startsWith('tokenizer.') || key.startsWith('tokenizer.chat_template')) continue;
    const written = key === 'tokenizer.ggml.tokens' ? tokens : key === 'tokenizer.ggml.token_type' ? types : value;
    metadata.push([key, ggufCopy(written, header.metadataTypes.get(key)!)]);
  }
  metadata.push(['tokenizer.chat_template', gguf.str(template)]);

  const unsamplable = tokens.map((text, token) => isUnsamplableToken(tokenizerModel, text, types[token]!));
  return describeLlamaModel(FAMILY_MODEL_SPEC, `manifold-test-${family}`, { size: tokens.length, metadata, unsamplable: (token) => unsamplable[token]! });
}

/** The family's template text and vocab file bytes, from llama.cpp's source (cloned first when needed). */
async function familySources(family: FamilyName): Promise<{ template: string; vocabBytes: Buffer }> {
  const source = await ensureLlamaCppSource();
  const { template, vocab } = FAMILY_MODELS[family];
  return { template: await readFile(templatePath(source, template), 'utf8'), vocabBytes: await readFile(vocabPath(source, vocab)) };
}

/** Writes the family's model to `path` atomically. */
export async function writeFamilyModel(path: string, family: FamilyName): Promise<void> {
  const { template, vocabBytes } = await familySources(family);
  await writeModelFile(path, await describeFamilyModel(family, template, vocabBytes));
}

/** The path of the cached model of `family`, generating it first when it is not there (keyed by everything it is made of). */
export async function ensureFamilyModel(family: FamilyName): Promise<string> {
  const { template, vocabBytes } = await familySources(family);
  const entry: FamilyModel = FAMILY_MODELS[family];
  const key = createHash('sha256')
    .update(JSON.stringify({ spec: FAMILY_MODEL_SPEC, entry, added: entry.added ? ADDED_TOKENS[entry.added] : null, WRITER_VERSION, FAMILY_WRITER_VERSION }))
    .update(template)
    .update(createHash('sha256').update(vocabBytes).digest())
    .digest('hex')
    .slice(0, 12);
  const path = join(modelCacheDir(), `manifold-test-${family}-${key}.gguf`);
  const existing = await stat(path).catch(() => undefined);
  if (!existing?.isFile()) await writeModelFile(path, await describeFamilyModel(family, template, vocabBytes));
  return path;
}
