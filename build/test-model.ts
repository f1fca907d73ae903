/**
 * The test-model maker: a deterministic llama-architecture GGUF with random weights from a seed, a
 * byte-fallback SentencePiece vocabulary with some merged pieces, BOS/EOS and a ChatML chat template.
 * Its text is noise; its compute, KV cache, slots and timings are real. `ensureTestModel` generates it on
 * demand into the cache folder (never committed), keyed by the spec so a change regenerates it.
 * `describeLlamaModel` is the architecture over any vocabulary (build/family-models.ts grafts real ones on).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GGML_TYPE_F16, GGML_TYPE_F32, GgufTokenType } from '../common/gguf/format.js';
import { CHATML_TEMPLATE } from '../common/chat-templates.js';
import { gguf, writeGguf, type GgufWriteTensor, type GgufWriteValue } from './gguf-writer.js';

export interface TestModelSpec {
  seed: number;
  layers: number;
  /** Embedding width (n_embd). */
  width: number;
  heads: number;
  /** Key/value heads; fewer than `heads` makes grouped-query attention. */
  kvHeads: number;
  feedForward: number;
  contextLength: number;
  /** Type of the 2-D weight matrices; norms are always F32. */
  tensorType: 'f32' | 'f16';
}

export type TestModelSize = 'tiny' | 'small' | 'bench' | 'large';

export const TEST_MODEL_SIZES: Readonly<Record<TestModelSize, TestModelSpec>> = {
  tiny: { seed: 1, layers: 2, width: 128, heads: 4, kvHeads: 2, feedForward: 256, contextLength: 4096, tensorType: 'f32' },
  small: { seed: 2, layers: 4, width: 256, heads: 8, kvHeads: 4, feedForward: 688, contextLength: 8192, tensorType: 'f16' },
  bench: { seed: 3, layers: 8, width: 512, heads: 8, kvHeads: 4, feedForward: 1408, contextLength: 16384, tensorType: 'f16' },
  /** ~1.1 B parameters (2.3 GB): big enough that a GPU's decode is bound by memory bandwidth (bench `gpu`); made on the spot, never in tests. */
  large: { seed: 4, layers: 24, width: 2048, heads: 16, kvHeads: 8, feedForward: 5632, contextLength: 8192, tensorType: 'f16' },
};

/** Bumped whenever the bytes this file writes for a given spec change. */
export const WRITER_VERSION = 2;

/**
 * The model never samples a token whose text is not valid UTF-8 on its own (the byte-fallback tokens here),
 * so its text is always valid UTF-8 (llama-server at the bundled llama.cpp version fails any completion
 * whose text is not: "does not match the expected Content-only format"). Hidden dimension 0 of the residual
 * stream is held at 1 — every token embedding has 1 there and no layer writes to it — so after the final
 * norm it is always positive, and each such token's output row weighs it by −UNSAMPLABLE_TOKEN_PENALTY:
 * their logits sit far below every other's.
 */
const UNSAMPLABLE_TOKEN_PENALTY = 50;

const SPACE = '\u2581';
const WORDS = (
  'the of and to in is was for on that with as by at from it his an were are which this be or has had not first one their ' +
  'its new after but who they have her she he two been other when there all during into school time may years more most ' +
  'only over city some world would where later up such used many can state about national out known university united then ' +
  'made system user assistant hello model token replica slot cache prefix engine route question answer please thank you ' +
  'what how why write code function return value number list file data test'
).split(' ');

export interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
  bos: number;
  eos: number;
  unk: number;
}

/** The byte-fallback SPM vocabulary: specials, 256 byte tokens, ChatML markers, characters, merged pieces. */
export function buildVocabulary(): Vocabulary {
  const tokens: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  const seen = new Set<string>();
  const add = (piece: string, type: GgufTokenType, score: number): void => {
    if (seen.has(piece)) return;
    seen.add(piece);
    tokens.push(piece);
    scores.push(score);
    types.push(type);
  };
  add('<unk>', GgufTokenType.UNKNOWN, 0);
  add('<s>', GgufTokenType.CONTROL, 0);
  add('</s>', GgufTokenType.CONTROL, 0);
  for (let b = 0; b < 256; b++) add(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, GgufTokenType.BYTE, 0);
  add('<|im_start|>', GgufTokenType.CONTROL, 0);
  add('<|im_end|>', GgufTokenType.CONTROL, 0);
  // Single characters score lowest, so merges win over them; longer merged pieces score higher.
  const chars = [SPACE, ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?\'"()-_/'];
  chars.forEach((c, i) => add(c, GgufTokenType.NORMAL, -1000 - i));
  for (const word of WORDS) {
    const piece = SPACE + word;
    // Every prefix is a piece too, so SentencePiece's pairwise merges can reach the whole word.
    for (let end = 2; end <= piece.length; end++) add(piece.slice(0, end), GgufTokenType.NORMAL, -100 + end);
  }
  return { tokens, scores, types, bos: 1, eos: tokens.indexOf('<|im_end|>'), unk: 0 };
}

/** xorshift32: a tiny seeded generator, enough for reproducible noise. */
function makeRandom(seed: number): () => number {
  let state = (seed * 2654435761) >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4294967296;
  };
}

const halfScratch = new Float32Array(1);
const halfScratchBits = new Uint32Array(halfScratch.buffer);

/** float32 → IEEE half, round to nearest even (through one shared scratch word: a large model has billions). */
function toHalf(value: number): number {
  halfScratch[0] = value;
  const bits = halfScratchBits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  let mantissa = bits & 0x7fffff;
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    mantissa = (mantissa | 0x800000) >>> (1 - exponent);
    return sign | ((mantissa + 0x1000) >>> 13);
  }
  if (exponent >= 31) return sign | 0x7c00;
  const half = sign | (exponent << 10) | (mantissa >>> 13);
  return mantissa & 0x1000 ? half + 1 : half;
}

function tensorBytes(count: number, type: 'f32' | 'f16', fill: (i: number) => number): Uint8Array {
  if (type === 'f32') {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = fill(i);
    return new Uint8Array(out.buffer);
  }
  const out = new Uint16Array(count);
  for (let i = 0; i < count; i++) out[i] = toHalf(fill(i));
  return new Uint8Array(out.buffer);
}

/** What a model's vocabulary gives it: the token count, the tokenizer metadata and the tokens it must never sample. */
export interface ModelVocabulary {
  size: number;
  /** Written after the hyper-parameters, in this order. */
  metadata: [string, GgufWriteValue][];
  unsamplable: (token: number) => boolean;
}

export interface ModelDescription {
  metadata: [string, GgufWriteValue][];
  tensors: GgufWriteTensor[];
}

/** The metadata and random tensors of a llama-architecture model of `spec` over `vocab`, named `name`. */
export function describeLlamaModel(spec: TestModelSpec, name: string, vocab: ModelVocabulary): ModelDescription {
  if (spec.width % spec.heads !== 0) throw new Error(`width ${spec.width} is not divisible by heads ${spec.heads}`);
  if (spec.heads % spec.kvHeads !== 0) throw new Error(`heads ${spec.heads} is not divisible by kvHeads ${spec.kvHeads}`);
  const headDim = spec.width / spec.heads;
  const kvWidth = headDim * spec.kvHeads;
  const metadata: [string, GgufWriteValue][] = [
    ['general.architecture', gguf.str('llama')],
    ['general.name', gguf.str(name)],
    ['general.file_type', gguf.u32(spec.tensorType === 'f16' ? 1 : 0)],
    ['llama.context_length', gguf.u32(spec.contextLength)],
    ['llama.embedding_length', gguf.u32(spec.width)],
    ['llama.block_count', gguf.u32(spec.layers)],
    ['llama.feed_forward_length', gguf.u32(spec.feedForward)],
    ['llama.attention.head_count', gguf.u32(spec.heads)],
    ['llama.attention.head_count_kv', gguf.u32(spec.kvHeads)],
    ['llama.rope.dimension_count', gguf.u32(headDim)],
    ['llama.rope.freq_base', gguf.f32(10000)],
    ['llama.attention.layer_norm_rms_epsilon', gguf.f32(1e-5)],
    ['llama.vocab_size', gguf.u32(vocab.size)],
    ...vocab.metadata,
  ];

  let tensorIndex = 0;
  /** Random rows; `fixed` sets an element (row, column) instead, for the constant dimension 0. */
  const matrix = (name: string, rowLength: number, rows: number, fixed: (row: number, column: number) => number | null = () => null): GgufWriteTensor => {
    const seed = spec.seed * 1_000_003 + tensorIndex++;
    const scale = 1 / Math.sqrt(rowLength);
    return {
      name,
      dims: [rowLength, rows],
      type: spec.tensorType === 'f16' ? GGML_TYPE_F16 : GGML_TYPE_F32,
      data: () => {
        const random = makeRandom(seed);
        return tensorBytes(rowLength * rows, spec.tensorType, (i) => {
          const noise = (random() * 2 - 1) * scale * 1.7;
          return fixed(Math.floor(i / rowLength), i % rowLength) ?? noise;
        });
      },
    };
  };
  // Dimension 0 of the residual stream: 1 in every embedding, never written by a layer, penalising unsamplable tokens at the output.
  const constantInput = (_row: number, column: number): number | null => (column === 0 ? 1 : null);
  const leavesDimensionZero = (row: number): number | null => (row === 0 ? 0 : null);
  const norm = (name: string): GgufWriteTensor => ({ name, dims: [spec.width], type: GGML_TYPE_F32, data: () => tensorBytes(spec.width, 'f32', () => 1) });

  const tensors: GgufWriteTensor[] = [matrix('token_embd.weight', spec.width, vocab.size, constantInput)];
  for (let layer = 0; layer < spec.layers; layer++) {
    const blk = `blk.${layer}`;
    tensors.push(
      norm(`${blk}.attn_norm.weight`),
      matrix(`${blk}.attn_q.weight`, spec.width, spec.width),
      matrix(`${blk}.attn_k.weight`, spec.width, kvWidth),
      matrix(`${blk}.attn_v.weight`, spec.width, kvWidth),
      matrix(`${blk}.attn_output.weight`, spec.width, spec.width, leavesDimensionZero),
      norm(`${blk}.ffn_norm.weight`),
      matrix(`${blk}.ffn_gate.weight`, spec.width, spec.feedForward),
      matrix(`${blk}.ffn_up.weight`, spec.width, spec.feedForward),
      matrix(`${blk}.ffn_down.weight`, spec.feedForward, spec.width, leavesDimensionZero),
    );
  }
  tensors.push(
    norm('output_norm.weight'),
    matrix('output.weight', spec.width, vocab.size, (row, column) => (column === 0 ? (vocab.unsamplable(row) ? -UNSAMPLABLE_TOKEN_PENALTY : 0) : null)),
  );
  return { metadata, tensors };
}

/** The metadata and tensors of the test model described by `spec`: the byte-fallback vocabulary, its byte tokens never sampled, and ChatML. */
export function describeTestModel(spec: TestModelSpec): ModelDescription {
  const vocab = buildVocabulary();
  return describeLlamaModel(spec, `manifold-test-${spec.layers}x${spec.width}-s${spec.seed}`, {
    size: vocab.tokens.length,
    metadata: [
      ['tokenizer.ggml.model', gguf.str('llama')],
      ['tokenizer.ggml.tokens', gguf.strings(vocab.tokens)],
      ['tokenizer.ggml.scores', gguf.f32s(vocab.scores)],
      ['tokenizer.ggml.token_type', gguf.i32s(vocab.types)],
      ['tokenizer.ggml.bos_token_id', gguf.u32(vocab.bos)],
      ['tokenizer.ggml.eos_token_id', gguf.u32(vocab.eos)],
      ['tokenizer.ggml.unknown_token_id', gguf.u32(vocab.unk)],
      ['tokenizer.ggml.add_bos_token', gguf.bool(true)],
      ['tokenizer.ggml.add_eos_token', gguf.bool(false)],
      ['tokenizer.chat_template', gguf.str(CHATML_TEMPLATE)],
    ],
    unsamplable: (token) => vocab.types[token] === GgufTokenType.BYTE,
  });
}

/** Writes a described model to `path` atomically (a temp file renamed into place). */
export async function writeModelFile(path: string, { metadata, tensors }: ModelDescription): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeGguf(temp, metadata, tensors);
  await rename(temp, path);
}

/** Writes the test model of `spec` to `path` atomically. */
export async function writeTestModel(path: string, spec: TestModelSpec): Promise<void> {
  await writeModelFile(path, describeTestModel(spec));
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The cache folder for generated models (`MANIFOLD_MODEL_CACHE` or `.cache/models` in the repository). */
export function modelCacheDir(): string {
  return process.env.MANIFOLD_MODEL_CACHE ?? join(repoRoot, '.cache', 'models');
}

/** The path of the cached model for `size`, generating it first when it is not there. */
export async function ensureTestModel(size: TestModelSize = 'tiny'): Promise<string> {
  const spec = TEST_MODEL_SIZES[size];
  const key = createHash('sha256').update(JSON.stringify({ spec, WRITER_VERSION })).digest('hex').slice(0, 12);
  const path = join(modelCacheDir(), `manifold-test-${size}-${key}.gguf`);
  const existing = await stat(path).catch(() => undefined);
  if (!existing?.isFile()) await writeTestModel(path, spec);
  return path;
}
