/** The hyper-parameter bounds of the header check: hostile values named with their bound; real shapes pass. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufFormatError } from '../../common/gguf/header-reader.js';
import { readGgufFileHeader, readModelFileHeader } from '../../common/node/gguf-file.js';
import { gguf, writeGguf, type GgufWriteValue } from '../../build/gguf-writer.js';
import { HOSTILE_MODELS, writeHostileModel } from '../helpers/hostile-models.js';
import { testModelPath } from '../helpers/engines.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'manifold-hparams-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A header-only model (no tensors): the bounds look at metadata alone. */
async function refusal(metadata: [string, GgufWriteValue][]): Promise<string | null> {
  const path = join(dir, `m-${Math.random().toString(36).slice(2)}.gguf`);
  await writeGguf(path, metadata, []);
  return readModelFileHeader(path).then(
    () => null,
    (error: unknown) => {
      expect(error).toBeInstanceOf(GgufFormatError);
      expect((error as GgufFormatError).code).toBe('invalid');
      return (error as Error).message;
    },
  );
}

const vocab: [string, GgufWriteValue] = ['tokenizer.ggml.tokens', gguf.strings(['<unk>', 'a'])];
const llama = (extra: [string, GgufWriteValue][] = []): [string, GgufWriteValue][] => [
  ['general.architecture', gguf.str('llama')],
  ['llama.block_count', gguf.u32(2)],
  ['llama.embedding_length', gguf.u32(128)],
  ['llama.attention.head_count', gguf.u32(4)],
  ['llama.attention.head_count_kv', gguf.u32(2)],
  vocab,
  ...extra,
];
const replace = (entries: [string, GgufWriteValue][], key: string, value: GgufWriteValue | null): [string, GgufWriteValue][] =>
  value === null ? entries.filter(([k]) => k !== key) : entries.map(([k, v]) => [k, k === key ? value : v]);

describe('hyper-parameter bounds', () => {
  it('pass the generated model', async () => {
    await expect(readModelFileHeader(testModelPath())).resolves.toMatchObject({ version: 3 });
  });

  it.each(HOSTILE_MODELS.filter((m) => m.problem !== null))('refuse $name, naming the key, its value and the bound', async (model) => {
    const path = await writeHostileModel(dir, model);
    // The bounded reader alone still reads it: the bounds are a separate check on top.
    await expect(readGgufFileHeader(path)).resolves.toBeDefined();
    const error = await readModelFileHeader(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GgufFormatError);
    expect((error as Error).message).toMatch(model.problem!);
  });

  it('refuse a missing architecture, layer count, embedding or vocabulary', async () => {
    expect(await refusal(replace(llama(), 'general.architecture', null))).toBe('general.architecture is missing (llama.cpp needs it to read the model)');
    expect(await refusal(replace(llama(), 'llama.block_count', null))).toBe('llama.block_count is missing');
    expect(await refusal(replace(llama(), 'llama.block_count', gguf.u32(0)))).toBe("llama.block_count = 0 is outside 1..512 (llama.cpp's LLAMA_MAX_LAYERS)");
    expect(await refusal(replace(llama(), 'llama.embedding_length', null))).toBe('llama.embedding_length is missing');
    expect(await refusal(replace(llama(), 'llama.attention.head_count', null))).toBe('llama.attention.head_count is missing');
    expect(await refusal(replace(llama(), 'tokenizer.ggml.tokens', gguf.strings([])))).toBe(
      'tokenizer.ggml.tokens is missing or empty: the model has no vocabulary',
    );
    expect(await refusal(llama([['llama.context_length', gguf.u32(0)]]))).toBe('llama.context_length = 0 must be at least 1');
    expect(await refusal(replace(llama(), 'llama.block_count', gguf.str('two')))).toBe('llama.block_count = two is not a count (a non-negative integer)');
    expect(await refusal(replace(llama(), 'llama.block_count', gguf.i32(-1)))).toBe('llama.block_count = -1 is not a count (a non-negative integer)');
  });

  it('check per-layer arrays item by item, and their length against the layers', async () => {
    expect(await refusal(replace(llama(), 'llama.attention.head_count', gguf.i32s([4, 0])))).toBe('llama.attention.head_count[1] = 0 must be at least 1');
    expect(await refusal(replace(llama(), 'llama.attention.head_count_kv', gguf.i32s([2, 0])))).toBe('llama.attention.head_count_kv[1] = 0 must be at least 1');
    expect(await refusal(replace(llama(), 'llama.attention.head_count_kv', gguf.i32s([2, 3])))).toBe(
      'llama.attention.head_count_kv[1] = 3 does not divide llama.attention.head_count = 4',
    );
    expect(await refusal(replace(llama(), 'llama.attention.head_count', gguf.i32s([4, 4, 4])))).toBe(
      'llama.attention.head_count has 3 items, but the model has 2 layers',
    );
    expect(await refusal(replace(llama(), 'llama.attention.head_count', gguf.i32s([8, 4])))).toBeNull();
  });

  it('follow llama.cpp on experts: used ≤ count, some used when there are experts, groups that split them', async () => {
    expect(
      await refusal(
        llama([
          ['llama.expert_count', gguf.u32(4)],
          ['llama.expert_used_count', gguf.u32(0)],
        ]),
      ),
    ).toBe('llama.expert_count = 4 needs llama.expert_used_count of at least 1');
    expect(await refusal(llama([['llama.expert_group_count', gguf.u32(2)]]))).toBe('llama.expert_group_count = 2 needs experts, but llama.expert_count = 0');
    const grouped = (groups: number, used: number): [string, GgufWriteValue][] => [
      ['llama.expert_count', gguf.u32(8)],
      ['llama.expert_used_count', gguf.u32(2)],
      ['llama.expert_group_count', gguf.u32(groups)],
      ['llama.expert_group_used_count', gguf.u32(used)],
    ];
    expect(await refusal(llama(grouped(3, 1)))).toBe('llama.expert_group_count = 3 does not divide llama.expert_count = 8');
    expect(await refusal(llama(grouped(4, 4)))).toBe('llama.expert_group_used_count = 4 is outside 1..3 (llama.expert_group_count = 4)');
    expect(await refusal(llama(grouped(4, 2)))).toBeNull();
    // A mixture-of-experts model's feed-forward length is not held to the dense rule.
    expect(await refusal(llama([...grouped(4, 2), ['llama.feed_forward_length', gguf.u32(0)]]))).toBeNull();
  });

  it('let recurrent models have no heads and hybrid models have layers without attention', async () => {
    const mamba: [string, GgufWriteValue][] = [
      ['general.architecture', gguf.str('mamba')],
      ['mamba.block_count', gguf.u32(2)],
      ['mamba.embedding_length', gguf.u32(64)],
      ['mamba.attention.head_count', gguf.u32(0)],
      vocab,
    ];
    expect(await refusal(mamba)).toBeNull();
    const jamba: [string, GgufWriteValue][] = [
      ['general.architecture', gguf.str('jamba')],
      ['jamba.block_count', gguf.u32(2)],
      ['jamba.embedding_length', gguf.u32(64)],
      ['jamba.attention.head_count', gguf.u32(4)],
      ['jamba.attention.head_count_kv', gguf.i32s([0, 2])],
      vocab,
    ];
    expect(await refusal(jamba)).toBeNull();
    // The same array in a plain llama model would make llama.cpp build a tensor of width 0.
    expect(await refusal(replace(llama(), 'llama.attention.head_count_kv', gguf.i32s([0, 2])))).toBe('llama.attention.head_count_kv[0] = 0 must be at least 1');
  });
});
