/**
 * The bounded GGUF header reader: parses a GGUF file's header, metadata and tensor table through a
 * random-access byte source and checks every count, length, dimension and offset against the file's real
 * size before trusting it. It is the only code that looks at an untrusted model file before native code
 * (node-llama-cpp, llama.cpp) does, so each loop is bounded by the bytes that remain.
 */
import {
  GGML_TYPES,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_MAX_DIMS,
  GGUF_SCALAR_SIZE,
  GGUF_SUPPORTED_VERSIONS,
  GgufValueType,
  ggmlTensorBytes,
} from './format.js';

/** Random access to the bytes of one file. */
export interface ByteSource {
  readonly size: number;
  /** Reads exactly `length` bytes at `offset` (the caller never asks past `size`). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

export type GgufScalar = number | bigint | boolean | string;
/** An array longer than the keep limit is summarised by its item type and length. */
export type GgufArraySummary = { readonly arrayOf: GgufValueType; readonly length: number };
export type GgufValue = GgufScalar | GgufScalar[] | GgufArraySummary;
/** A metadata value's GGUF type: a scalar's own, or ARRAY with its items' type. */
export type GgufValueTypeInfo = { readonly type: GgufValueType; readonly itemType?: GgufValueType };

export interface GgufTensorInfo {
  readonly name: string;
  readonly dims: readonly number[];
  readonly type: number;
  readonly typeName: string;
  /** Offset from the start of the data section. */
  readonly offset: number;
  readonly bytes: number;
}

export interface GgufHeader {
  readonly version: number;
  readonly alignment: number;
  readonly metadata: ReadonlyMap<string, GgufValue>;
  /** The GGUF type of each metadata value, so a writer can copy a value as it was stored. */
  readonly metadataTypes: ReadonlyMap<string, GgufValueTypeInfo>;
  readonly tensors: readonly GgufTensorInfo[];
  /** Absolute file offset where tensor data starts. */
  readonly dataOffset: number;
  readonly fileSize: number;
}

export type GgufErrorCode = 'not_gguf' | 'unsupported_version' | 'truncated' | 'invalid';

export class GgufFormatError extends Error {
  constructor(
    readonly code: GgufErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'GgufFormatError';
  }
}

export interface GgufReadLimits {
  /** Arrays with more items than this are summarised, not kept (their bytes are still checked). */
  keepArrayItems: number;
  maxMetadataEntries: number;
  maxTensors: number;
  maxStringBytes: number;
}

export const DEFAULT_GGUF_READ_LIMITS: GgufReadLimits = {
  keepArrayItems: 1024,
  maxMetadataEntries: 65_536,
  maxTensors: 1_048_576,
  maxStringBytes: 64 * 1024 * 1024,
};

const CHUNK_BYTES = 1 << 20;
// ignoreBOM: a leading U+FEFF is part of the string (a token of some vocabularies), not a byte-order mark to drop.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A forward cursor over a ByteSource that reads in chunks and refuses to pass the end of the file. */
class Cursor {
  private buf: Uint8Array = new Uint8Array(0);
  private bufStart = 0;
  pos = 0;

  constructor(private readonly source: ByteSource) {}

  get remaining(): number {
    return this.source.size - this.pos;
  }

  private async need(n: number, what: string): Promise<DataView> {
    if (n > this.remaining) {
      throw new GgufFormatError('truncated', `file ends inside ${what} (needs ${n} bytes at offset ${this.pos}, file is ${this.source.size} bytes)`);
    }
    const end = this.pos + n;
    if (this.pos < this.bufStart || end > this.bufStart + this.buf.length) {
      const length = Math.min(Math.max(n, CHUNK_BYTES), this.source.size - this.pos);
      this.buf = await this.source.read(this.pos, length);
      this.bufStart = this.pos;
      if (this.buf.length < n) throw new GgufFormatError('truncated', `file shrank while reading ${what} at offset ${this.pos}`);
    }
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + (this.pos - this.bufStart), n);
    this.pos = end;
    return view;
  }

  async u32(what: string): Promise<number> {
    return (await this.need(4, what)).getUint32(0, true);
  }

  async u64(what: string): Promise<bigint> {
    return (await this.need(8, what)).getBigUint64(0, true);
  }

  /** A u64 count or length that must fit in a safe integer and in `max`. */
  async count(what: string, max: number): Promise<number> {
    const value = await this.u64(what);
    if (value > BigInt(max)) throw new GgufFormatError('invalid', `${what} is ${value}, above the limit of ${max}`);
    return Number(value);
  }

  async string(what: string, maxBytes: number): Promise<string> {
    const length = await this.count(`${what} length`, Math.min(maxBytes, this.remaining));
    const view = await this.need(length, what);
    try {
      return utf8.decode(new Uint8Array(view.buffer, view.byteOffset, length));
    } catch {
      throw new GgufFormatError('invalid', `${what} is not valid UTF-8`);
    }
  }

  async scalar(type: GgufValueType, what: string, maxStringBytes: number): Promise<GgufScalar> {
    if (type === GgufValueType.STRING) return this.string(what, maxStringBytes);
    const size = GGUF_SCALAR_SIZE[type];
    if (size === undefined) throw new GgufFormatError('invalid', `${what} has unknown value type ${type}`);
    const v = await this.need(size, what);
    switch (type) {
      case GgufValueType.UINT8:
        return v.getUint8(0);
      case GgufValueType.INT8:
        return v.getInt8(0);
      case GgufValueType.UINT16:
        return v.getUint16(0, true);
      case GgufValueType.INT16:
        return v.getInt16(0, true);
      case GgufValueType.UINT32:
        return v.getUint32(0, true);
      case GgufValueType.INT32:
        return v.getInt32(0, true);
      case GgufValueType.FLOAT32:
        return v.getFloat32(0, true);
      case GgufValueType.BOOL:
        return v.getUint8(0) !== 0;
      case GgufValueType.UINT64:
        return v.getBigUint64(0, true);
      case GgufValueType.INT64:
        return v.getBigInt64(0, true);
      default:
        return v.getFloat64(0, true);
    }
  }
}

async function readValue(cursor: Cursor, type: number, key: string, limits: GgufReadLimits): Promise<{ value: GgufValue; valueType: GgufValueTypeInfo }> {
  if (type !== GgufValueType.ARRAY) return { value: await cursor.scalar(type, `value of ${key}`, limits.maxStringBytes), valueType: { type } };
  const itemType = await cursor.u32(`array type of ${key}`);
  if (itemType === GgufValueType.ARRAY) throw new GgufFormatError('invalid', `${key} is an array of arrays`);
  const minItemBytes = itemType === GgufValueType.STRING ? 8 : GGUF_SCALAR_SIZE[itemType as GgufValueType];
  if (minItemBytes === undefined) throw new GgufFormatError('invalid', `${key} has unknown array item type ${itemType}`);
  const length = await cursor.count(`array length of ${key}`, Math.floor(cursor.remaining / minItemBytes));
  const keep = length <= limits.keepArrayItems;
  const items: GgufScalar[] = [];
  for (let i = 0; i < length; i++) {
    const item = await cursor.scalar(itemType, `item ${i} of ${key}`, limits.maxStringBytes);
    if (keep) items.push(item);
  }
  return { value: keep ? items : { arrayOf: itemType, length }, valueType: { type, itemType } };
}

/** How many items a metadata array has (kept or summarised); 0 for a missing or non-array value. */
export function metadataArrayLength(value: GgufValue | undefined): number {
  if (Array.isArray(value)) return value.length;
  return typeof value === 'object' && value !== null ? value.length : 0;
}

/** A metadata value as text; null when it is missing or not a string. */
export function metadataText(header: GgufHeader, key: string): string | null {
  const value = header.metadata.get(key);
  return typeof value === 'string' ? value : null;
}

/** A metadata value as a number (the largest item of a per-layer array); null when it is none. */
export function metadataNumber(header: GgufHeader, key: string): number | null {
  const value = header.metadata.get(key);
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'number' || typeof v === 'bigint')) return Math.max(...value.map(Number));
  return null;
}

/** Parses and checks a GGUF header; throws GgufFormatError naming the first thing that is wrong. */
export async function readGgufHeader(source: ByteSource, limits: GgufReadLimits = DEFAULT_GGUF_READ_LIMITS): Promise<GgufHeader> {
  const cursor = new Cursor(source);
  if (source.size < 4 || (await cursor.u32('magic')) !== GGUF_MAGIC) {
    throw new GgufFormatError('not_gguf', 'not a GGUF file (the first four bytes are not "GGUF")');
  }
  const version = await cursor.u32('version');
  if (!(GGUF_SUPPORTED_VERSIONS as readonly number[]).includes(version)) {
    throw new GgufFormatError('unsupported_version', `GGUF version ${version} is not supported (supported: ${GGUF_SUPPORTED_VERSIONS.join(', ')})`);
  }
  const tensorCount = await cursor.count('tensor count', limits.maxTensors);
  const entryCount = await cursor.count('metadata entry count', limits.maxMetadataEntries);

  const metadata = new Map<string, GgufValue>();
  const metadataTypes = new Map<string, GgufValueTypeInfo>();
  for (let i = 0; i < entryCount; i++) {
    const key = await cursor.string(`key of metadata entry ${i}`, 65_536);
    if (metadata.has(key)) throw new GgufFormatError('invalid', `metadata key ${key} appears twice`);
    const type = await cursor.u32(`value type of ${key}`);
    const { value, valueType } = await readValue(cursor, type, key, limits);
    metadata.set(key, value);
    metadataTypes.set(key, valueType);
  }

  const alignmentValue = metadata.get('general.alignment') ?? GGUF_DEFAULT_ALIGNMENT;
  if (typeof alignmentValue !== 'number' || alignmentValue <= 0 || (alignmentValue & (alignmentValue - 1)) !== 0) {
    throw new GgufFormatError('invalid', `general.alignment must be a power of two, got ${String(alignmentValue)}`);
  }
  const alignment = alignmentValue;

  const raw: { name: string; dims: bigint[]; type: number; offset: bigint }[] = [];
  const names = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const name = await cursor.string(`name of tensor ${i}`, 65_536);
    if (names.has(name)) throw new GgufFormatError('invalid', `tensor ${name} appears twice`);
    names.add(name);
    const nDims = await cursor.u32(`dimension count of ${name}`);
    if (nDims < 1 || nDims > GGUF_MAX_DIMS) throw new GgufFormatError('invalid', `tensor ${name} has ${nDims} dimensions (1 to ${GGUF_MAX_DIMS} allowed)`);
    const dims: bigint[] = [];
    for (let d = 0; d < nDims; d++) {
      const dim = await cursor.u64(`dimension ${d} of ${name}`);
      if (dim < 1n || dim > BigInt(source.size) * 8n) throw new GgufFormatError('invalid', `tensor ${name} has impossible dimension ${dim}`);
      dims.push(dim);
    }
    const type = await cursor.u32(`type of ${name}`);
    if (!GGML_TYPES[type]) throw new GgufFormatError('invalid', `tensor ${name} has unknown type ${type}`);
    const offset = await cursor.u64(`offset of ${name}`);
    raw.push({ name, dims, type, offset });
  }

  const dataOffset = Math.ceil(cursor.pos / alignment) * alignment;
  const dataBytes = BigInt(source.size - dataOffset);
  if (tensorCount > 0 && dataBytes < 0n) throw new GgufFormatError('truncated', 'file ends before its tensor data section');
  const tensors = raw.map(({ name, dims, type, offset }): GgufTensorInfo => {
    const bytes = ggmlTensorBytes(type, dims);
    if (typeof bytes === 'string') throw new GgufFormatError('invalid', `tensor ${name}: ${bytes}`);
    if (offset % BigInt(alignment) !== 0n) throw new GgufFormatError('invalid', `tensor ${name} offset ${offset} is not aligned to ${alignment}`);
    if (offset + bytes > dataBytes) {
      throw new GgufFormatError('truncated', `tensor ${name} (${bytes} bytes at data offset ${offset}) runs past the end of the file`);
    }
    return { name, dims: dims.map(Number), type, typeName: GGML_TYPES[type]![0], offset: Number(offset), bytes: Number(bytes) };
  });

  return { version, alignment, metadata, metadataTypes, tensors, dataOffset, fileSize: source.size };
}
