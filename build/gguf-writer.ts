/**
 * A small GGUF v3 writer: typed metadata entries and tensors, written with the format's alignment.
 * Used by the test-model maker; it writes only what it is given and checks each tensor's byte size.
 */
import { open } from 'node:fs/promises';
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufValueType, ggmlTensorBytes } from '../common/gguf/format.js';
import type { GgufScalar, GgufValue, GgufValueTypeInfo } from '../common/gguf/header-reader.js';

/** Any GGUF metadata value: a scalar of its type, or an array of one item type (its JS type is checked as it is written). */
export type GgufWriteValue =
  | { type: Exclude<GgufValueType, GgufValueType.ARRAY>; value: GgufScalar }
  | { type: GgufValueType.ARRAY; itemType: Exclude<GgufValueType, GgufValueType.ARRAY>; items: readonly GgufScalar[] };

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

/** A value the header reader returned, with the type it reported, as a value to write back unchanged; throws on a summarised array. */
export function ggufCopy(value: GgufValue, valueType: GgufValueTypeInfo): GgufWriteValue {
  if (valueType.type !== GgufValueType.ARRAY) return { type: valueType.type, value: value as GgufScalar };
  if (!Array.isArray(value) || valueType.itemType === undefined || valueType.itemType === GgufValueType.ARRAY) {
    throw new Error('only a kept array can be copied (read it with a larger keepArrayItems)');
  }
  return { type: GgufValueType.ARRAY, itemType: valueType.itemType, items: value };
}

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
  /** A fixed-width number through one of Buffer's little-endian writers (which refuse a value out of the type's range). */
  private fixed<T>(size: number, write: (b: Buffer, v: T) => unknown, v: T): void {
    const b = Buffer.alloc(size);
    write(b, v);
    this.push(b);
  }
  u8(v: number): void {
    this.fixed(1, (b, x: number) => b.writeUInt8(x), v);
  }
  i8(v: number): void {
    this.fixed(1, (b, x: number) => b.writeInt8(x), v);
  }
  u16(v: number): void {
    this.fixed(2, (b, x: number) => b.writeUInt16LE(x), v);
  }
  i16(v: number): void {
    this.fixed(2, (b, x: number) => b.writeInt16LE(x), v);
  }
  u32(v: number): void {
    this.fixed(4, (b, x: number) => b.writeUInt32LE(x), v);
  }
  i32(v: number): void {
    this.fixed(4, (b, x: number) => b.writeInt32LE(x), v);
  }
  f32(v: number): void {
    this.fixed(4, (b, x: number) => b.writeFloatLE(x), v);
  }
  f64(v: number): void {
    this.fixed(8, (b, x: number) => b.writeDoubleLE(x), v);
  }
  u64(v: number | bigint): void {
    this.fixed(8, (b, x: bigint) => b.writeBigUInt64LE(x), BigInt(v));
  }
  i64(v: bigint): void {
    this.fixed(8, (b, x: bigint) => b.writeBigInt64LE(x), v);
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

/** One scalar of `type`; throws when its JS type is not the one that type is read as. */
function writeScalar(out: HeaderBytes, type: GgufValueType, value: GgufScalar, what: string): void {
  const expected =
    type === GgufValueType.STRING
      ? 'string'
      : type === GgufValueType.BOOL
        ? 'boolean'
        : type === GgufValueType.UINT64 || type === GgufValueType.INT64
          ? 'bigint'
          : 'number';
  if (typeof value !== expected) throw new Error(`${what}: a ${GgufValueType[type]} value must be a ${expected}, got ${typeof value}`);
  switch (type) {
    case GgufValueType.UINT8:
      return out.u8(value as number);
    case GgufValueType.INT8:
      return out.i8(value as number);
    case GgufValueType.UINT16:
      return out.u16(value as number);
    case GgufValueType.INT16:
      return out.i16(value as number);
    case GgufValueType.UINT32:
      return out.u32(value as number);
    case GgufValueType.INT32:
      return out.i32(value as number);
    case GgufValueType.FLOAT32:
      return out.f32(value as number);
    case GgufValueType.FLOAT64:
      return out.f64(value as number);
    case GgufValueType.UINT64:
      return out.u64(value as bigint);
    case GgufValueType.INT64:
      return out.i64(value as bigint);
    case GgufValueType.BOOL:
      return out.u8(value ? 1 : 0);
    case GgufValueType.STRING:
      return out.string(value as string);
    default:
      throw new Error(`${what}: ${GgufValueType[type] ?? type} is not a scalar type`);
  }
}

function writeValue(out: HeaderBytes, key: string, value: GgufWriteValue): void {
  out.u32(value.type);
  if (value.type !== GgufValueType.ARRAY) return writeScalar(out, value.type, value.value, key);
  out.u32(value.itemType);
  out.u64(value.items.length);
  for (const item of value.items) writeScalar(out, value.itemType, item, key);
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
    writeValue(header, key, value);
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
