/**
 * A small GGUF v3 writer: typed metadata entries and tensors, written with the format's alignment.
 * Used by the test-model maker; it writes only what it is given and checks each tensor's byte size.
 */
import { open } from 'node:fs/promises';
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufValueType, ggmlTensorBytes } from '../common/gguf/format.js';

export type GgufWriteScalar =
  | { type: GgufValueType.UINT32 | GgufValueType.INT32 | GgufValueType.FLOAT32 | GgufValueType.UINT8; value: number }
  | { type: GgufValueType.BOOL; value: boolean }
  | { type: GgufValueType.STRING; value: string };
export type GgufWriteValue =
  | GgufWriteScalar
  | { type: GgufValueType.ARRAY; itemType: GgufValueType.STRING; items: readonly string[] }
  | { type: GgufValueType.ARRAY; itemType: GgufValueType.FLOAT32 | GgufValueType.INT32; items: readonly number[] };

export const gguf = {
  u32: (value: number): GgufWriteValue => ({ type: GgufValueType.UINT32, value }),
  i32: (value: number): GgufWriteValue => ({ type: GgufValueType.INT32, value }),
  f32: (value: number): GgufWriteValue => ({ type: GgufValueType.FLOAT32, value }),
  bool: (value: boolean): GgufWriteValue => ({ type: GgufValueType.BOOL, value }),
  str: (value: string): GgufWriteValue => ({ type: GgufValueType.STRING, value }),
  strings: (items: readonly string[]): GgufWriteValue => ({ type: GgufValueType.ARRAY, itemType: GgufValueType.STRING, items }),
  f32s: (items: readonly number[]): GgufWriteValue => ({ type: GgufValueType.ARRAY, itemType: GgufValueType.FLOAT32, items }),
  i32s: (items: readonly number[]): GgufWriteValue => ({ type: GgufValueType.ARRAY, itemType: GgufValueType.INT32, items }),
};

export interface GgufWriteTensor {
  name: string;
  /** ggml order: dims[0] is the row length. */
  dims: readonly number[];
  type: number;
  /** Produces the tensor's bytes when it is written (so a large model is never whole in memory). */
  data: () => Uint8Array;
}

/** Growable little-endian byte builder for the header. */
class HeaderBytes {
  private chunks: Buffer[] = [];
  length = 0;

  private push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  u8(v: number): void {
    this.push(Buffer.from([v]));
  }
  string(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  pad(alignment: number): void {
    const extra = (alignment - (this.length % alignment)) % alignment;
    if (extra) this.push(Buffer.alloc(extra));
  }
  toBuffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function writeValue(out: HeaderBytes, value: GgufWriteValue): void {
  out.u32(value.type);
  switch (value.type) {
    case GgufValueType.UINT32: return out.u32(value.value);
    case GgufValueType.INT32: return out.i32(value.value);
    case GgufValueType.FLOAT32: return out.f32(value.value);
    case GgufValueType.UINT8: return out.u8(value.value);
    case GgufValueType.BOOL: return out.u8(value.value ? 1 : 0);
    case GgufValueType.STRING: return out.string(value.value);
    case GgufValueType.ARRAY: {
      out.u32(value.itemType);
      out.u64(value.items.length);
      if (value.itemType === GgufValueType.STRING) for (const s of value.items) out.string(s);
      else if (value.itemType === GgufValueType.FLOAT32) for (const n of value.items) out.f32(n);
      else for (const n of value.items) out.i32(n);
    }
  }
}

/** Writes a GGUF v3 file at `path`. */
export async function writeGguf(path: string, metadata: ReadonlyArray<readonly [string, GgufWriteValue]>, tensors: readonly GgufWriteTensor[]): Promise<void> {
  const alignment = GGUF_DEFAULT_ALIGNMENT;
  const header = new HeaderBytes();
  header.u32(GGUF_MAGIC);
  header.u32(3);
  header.u64(tensors.length);
  header.u64(metadata.length);
  for (const [key, value] of metadata) {
    header.string(key);
    writeValue(header, value);
  }
  let offset = 0n;
  const sizes: bigint[] = [];
  for (const t of tensors) {
    const bytes = ggmlTensorBytes(t.type, t.dims.map(BigInt));
    if (typeof bytes === 'string') throw new Error(`tensor ${t.name}: ${bytes}`);
    header.string(t.name);
    header.u32(t.dims.length);
    for (const d of t.dims) header.u64(d);
    header.u32(t.type);
    header.u64(offset);
    sizes.push(bytes);
    offset += bytes + ((BigInt(alignment) - (bytes % BigInt(alignment))) % BigInt(alignment));
  }
  header.pad(alignment);

  const file = await open(path, 'w');
  try {
    await file.write(header.toBuffer());
    for (const [i, t] of tensors.entries()) {
      const data = t.data();
      if (BigInt(data.byteLength) !== sizes[i]) throw new Error(`tensor ${t.name} has ${data.byteLength} bytes, expected ${sizes[i]}`);
      await file.write(data);
      const padding = (alignment - (data.byteLength % alignment)) % alignment;
      if (padding) await file.write(Buffer.alloc(padding));
    }
    await file.sync();
  } finally {
    await file.close();
  }
}
