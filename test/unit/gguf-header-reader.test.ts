/** The bounded GGUF header reader on the generated model and on broken and hostile headers. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufValueType } from '../../common/gguf/format.js';
import { GgufFormatError, metadataArrayLength, readGgufHeader, type ByteSource } from '../../common/gguf/header-reader.js';
import { ModelFileError, readGgufFileHeader } from '../../common/node/gguf-file.js';
import { gguf, ggufCopy, writeGguf, type GgufWriteValue } from '../../build/gguf-writer.js';
import { buildVocabulary, describeTestModel, TEST_MODEL_SIZES, writeTestModel } from '../../build/test-model.js';
import { testModelPath } from '../helpers/engines.js';

const fromBytes = (bytes: Uint8Array): ByteSource => ({ size: bytes.length, read: async (o, l) => bytes.subarray(o, o + l) });

/** A header built by hand, for shapes the writer would never produce. */
function header(parts: (['u32', number] | ['u64', bigint] | ['str', string])[]): Uint8Array {
  const chunks = parts.map(([kind, value]) => {
    if (kind === 'u32') {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(value);
      return b;
    }
    if (kind === 'u64') {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(value);
      return b;
    }
    const s = Buffer.from(value);
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(s.length));
    return Buffer.concat([len, s]);
  });
  return Buffer.concat(chunks);
}

const MAGIC: ['u32', number] = ['u32', 0x46554747];

async function expectError(bytes: Uint8Array, code: string, text: string | RegExp): Promise<void> {
  const error = await readGgufHeader(fromBytes(bytes)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(GgufFormatError);
  expect((error as GgufFormatError).code).toBe(code);
  expect((error as GgufFormatError).message).toMatch(text);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'manifold-gguf-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('GGUF header reader', () => {
  it('reads the generated model: metadata, vocabulary size and every tensor inside the file', async () => {
    const parsed = await readGgufFileHeader(testModelPath());
    const spec = TEST_MODEL_SIZES.tiny;
    expect(parsed.version).toBe(3);
    expect(parsed.metadata.get('general.architecture')).toBe('llama');
    expect(parsed.metadata.get('llama.block_count')).toBe(spec.layers);
    expect(parsed.metadata.get('llama.attention.head_count_kv')).toBe(spec.kvHeads);
    expect(metadataArrayLength(parsed.metadata.get('tokenizer.ggml.tokens'))).toBe(buildVocabulary().tokens.length);
    expect(parsed.tensors).toHaveLength(describeTestModel(spec).tensors.length);
    const last = parsed.tensors.at(-1)!;
    expect(parsed.dataOffset + last.offset + last.bytes).toBeLessThanOrEqual(parsed.fileSize);
    expect(parsed.tensors.find((t) => t.name === 'blk.0.attn_k.weight')?.dims).toEqual([spec.width, (spec.width / spec.heads) * spec.kvHeads]);
  });

  it('summarises arrays above the keep limit but still checks their bytes', async () => {
    const path = join(dir, 'array.gguf');
    await writeGguf(
      path,
      [
        ['big', gguf.i32s(Array.from({ length: 5000 }, (_, i) => i))],
        ['small', gguf.strings(['a', 'b'])],
      ],
      [],
    );
    const parsed = await readGgufFileHeader(path);
    expect(parsed.metadata.get('big')).toEqual({ arrayOf: GgufValueType.INT32, length: 5000 });
    expect(parsed.metadata.get('small')).toEqual(['a', 'b']);
  });

  it('writes and reads back a value of every type, with the type it was written as', async () => {
    const path = join(dir, 'types.gguf');
    const entries: [string, GgufWriteValue][] = [
      ['u8', { type: GgufValueType.UINT8, value: 255 }],
      ['i8', { type: GgufValueType.INT8, value: -128 }],
      ['u16', { type: GgufValueType.UINT16, value: 65535 }],
      ['i16', { type: GgufValueType.INT16, value: -32768 }],
      ['u32', gguf.u32(4294967295)],
      ['i32', gguf.i32(-5)],
      ['f32', gguf.f32(0.5)],
      ['f64', { type: GgufValueType.FLOAT64, value: 1e-300 }],
      ['u64', { type: GgufValueType.UINT64, value: 1n << 63n }],
      ['i64', { type: GgufValueType.INT64, value: -(1n << 62n) }],
      ['bool', gguf.bool(true)],
      ['bom', gguf.str('\uFEFFword')],
      ['bools', { type: GgufValueType.ARRAY, itemType: GgufValueType.BOOL, items: [true, false] }],
      ['i8s', { type: GgufValueType.ARRAY, itemType: GgufValueType.INT8, items: [-1, 2] }],
      ['u64s', { type: GgufValueType.ARRAY, itemType: GgufValueType.UINT64, items: [0n, 7n] }],
      ['none', { type: GgufValueType.ARRAY, itemType: GgufValueType.FLOAT32, items: [] }],
    ];
    await writeGguf(path, entries, []);
    const parsed = await readGgufFileHeader(path);
    for (const [key, value] of entries) {
      expect(parsed.metadata.get(key)).toEqual(value.type === GgufValueType.ARRAY ? value.items : value.value);
      expect(parsed.metadataTypes.get(key)).toEqual(value.type === GgufValueType.ARRAY ? { type: value.type, itemType: value.itemType } : { type: value.type });
    }
    const copy = join(dir, 'types-copy.gguf');
    await writeGguf(
      copy,
      entries.map(([key]) => [key, ggufCopy(parsed.metadata.get(key)!, parsed.metadataTypes.get(key)!)]),
      [],
    );
    expect((await readFile(copy)).equals(await readFile(path))).toBe(true);
  });

  it('refuses to write a value whose JS type is not its GGUF type, or out of its range', async () => {
    await expect(writeGguf(join(dir, 'bad.gguf'), [['k', { type: GgufValueType.UINT64, value: 1 }]], [])).rejects.toThrow(/UINT64 value must be a bigint/);
    await expect(writeGguf(join(dir, 'bad.gguf'), [['k', { type: GgufValueType.UINT8, value: 256 }]], [])).rejects.toThrow(/out of range/);
  });

  it('names a missing file and a folder', async () => {
    await expect(readGgufFileHeader(join(dir, 'missing.gguf'))).rejects.toMatchObject({ code: 'not_found' });
    await expect(readGgufFileHeader(dir)).rejects.toBeInstanceOf(ModelFileError);
  });

  it('refuses a wrong magic, an unsupported version and an empty file', async () => {
    await expectError(Buffer.from('GGML....'), 'not_gguf', /not a GGUF file/);
    await expectError(new Uint8Array(0), 'not_gguf', /not a GGUF file/);
    await expectError(header([MAGIC, ['u32', 99], ['u64', 0n], ['u64', 0n]]), 'unsupported_version', /version 99/);
  });

  it('refuses counts, lengths and dimensions the file cannot hold, without reading past its end', async () => {
    await expectError(header([MAGIC, ['u32', 3], ['u64', 1n << 40n], ['u64', 0n]]), 'invalid', /tensor count/);
    await expectError(header([MAGIC, ['u32', 3], ['u64', 0n], ['u64', 1n << 40n]]), 'invalid', /metadata entry count/);
    // A key whose length runs past the end of the file.
    await expectError(header([MAGIC, ['u32', 3], ['u64', 0n], ['u64', 1n], ['u64', 1n << 50n]]), 'invalid', /key of metadata entry 0 length/);
    // An array of strings claiming more items than bytes remain.
    await expectError(
      header([MAGIC, ['u32', 3], ['u64', 0n], ['u64', 1n], ['str', 'k'], ['u32', 9], ['u32', 8], ['u64', 1n << 40n]]),
      'invalid',
      /array length of k/,
    );
    // Five dimensions, and an absurd dimension.
    await expectError(header([MAGIC, ['u32', 3], ['u64', 1n], ['u64', 0n], ['str', 't'], ['u32', 5]]), 'invalid', /5 dimensions/);
    await expectError(header([MAGIC, ['u32', 3], ['u64', 1n], ['u64', 0n], ['str', 't'], ['u32', 1], ['u64', 1n << 60n]]), 'invalid', /impossible dimension/);
    // An unknown value type and an unknown tensor type.
    await expectError(header([MAGIC, ['u32', 3], ['u64', 0n], ['u64', 1n], ['str', 'k'], ['u32', 77]]), 'invalid', /unknown value type 77/);
    await expectError(
      header([MAGIC, ['u32', 3], ['u64', 1n], ['u64', 0n], ['str', 't'], ['u32', 1], ['u64', 4n], ['u32', 200], ['u64', 0n]]),
      'invalid',
      /unknown type 200/,
    );
  });

  it('refuses tensor data that runs past the end of the file, and a misaligned offset', async () => {
    const path = join(dir, 'tensor.gguf');
    await writeGguf(path, [], [{ name: 'w', dims: [8, 8], type: 0, data: () => new Uint8Array(256) }]);
    const bytes = await readFile(path);
    await expectError(bytes.subarray(0, bytes.length - 1), 'truncated', /runs past the end/);
    const misaligned = Buffer.from(bytes);
    // The tensor's offset is the last u64 of its info, just before the header padding.
    const infoEnd = bytes.indexOf(Buffer.from('w')) + 1 + 4 + 16 + 4;
    misaligned.writeBigUInt64LE(3n, infoEnd);
    await expectError(misaligned, 'invalid', /not aligned/);
  });

  it('refuses a duplicate key and invalid UTF-8 in a string', async () => {
    await expectError(
      header([MAGIC, ['u32', 3], ['u64', 0n], ['u64', 2n], ['str', 'k'], ['u32', 4], ['u32', 1], ['str', 'k'], ['u32', 4], ['u32', 1]]),
      'invalid',
      /appears twice/,
    );
    const bad = Buffer.concat([header([MAGIC, ['u32', 3], ['u64', 0n], ['u64', 1n], ['u64', 2n]]), Buffer.from([0xff, 0xfe])]);
    await expectError(bad, 'invalid', /not valid UTF-8/);
  });

  it('writes the same bytes for the same seed and different bytes for another', async () => {
    const spec = { ...TEST_MODEL_SIZES.tiny, layers: 1, width: 64, heads: 2, kvHeads: 1, feedForward: 64 };
    await writeTestModel(join(dir, 'a.gguf'), spec);
    await writeTestModel(join(dir, 'b.gguf'), spec);
    await writeTestModel(join(dir, 'c.gguf'), { ...spec, seed: 99 });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => readFile(join(dir, `${n}.gguf`))));
    expect(a!.equals(b!)).toBe(true);
    expect(a!.equals(c!)).toBe(false);
    expect(a!.length).toBe(c!.length);
  });
});
