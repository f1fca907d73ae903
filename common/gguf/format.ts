/**
 * The GGUF v3 file format's constants: value types, tensor (ggml) types with their block sizes,
 * and the limits our readers apply. Shared by the bounded header reader and the test-model writer.
 */

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_SUPPORTED_VERSIONS = [2, 3] as const;
export const GGUF_DEFAULT_ALIGNMENT = 32;

export enum GgufValueType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

/** Byte size of each fixed-width value type (STRING and ARRAY are variable). */
export const GGUF_SCALAR_SIZE: Readonly<Partial<Record<GgufValueType, number>>> = {
  [GgufValueType.UINT8]: 1,
  [GgufValueType.INT8]: 1,
  [GgufValueType.UINT16]: 2,
  [GgufValueType.INT16]: 2,
  [GgufValueType.UINT32]: 4,
  [GgufValueType.INT32]: 4,
  [GgufValueType.FLOAT32]: 4,
  [GgufValueType.BOOL]: 1,
  [GgufValueType.UINT64]: 8,
  [GgufValueType.INT64]: 8,
  [GgufValueType.FLOAT64]: 8,
};

/** ggml tensor types: [name, elements per block, bytes per block]. */
export const GGML_TYPES: Readonly<Record<number, readonly [string, number, number]>> = {
  0: ['F32', 1, 4],
  1: ['F16', 1, 2],
  2: ['Q4_0', 32, 18],
  3: ['Q4_1', 32, 20],
  6: ['Q5_0', 32, 22],
  7: ['Q5_1', 32, 24],
  8: ['Q8_0', 32, 34],
  9: ['Q8_1', 32, 36],
  10: ['Q2_K', 256, 84],
  11: ['Q3_K', 256, 110],
  12: ['Q4_K', 256, 144],
  13: ['Q5_K', 256, 176],
  14: ['Q6_K', 256, 210],
  15: ['Q8_K', 256, 292],
  16: ['IQ2_XXS', 256, 66],
  17: ['IQ2_XS', 256, 74],
  18: ['IQ3_XXS', 256, 98],
  19: ['IQ1_S', 256, 50],
  20: ['IQ4_NL', 32, 18],
  21: ['IQ3_S', 256, 110],
  22: ['IQ2_S', 256, 82],
  23: ['IQ4_XS', 256, 136],
  24: ['I8', 1, 1],
  25: ['I16', 1, 2],
  26: ['I32', 1, 4],
  27: ['I64', 1, 8],
  28: ['F64', 1, 8],
  29: ['IQ1_M', 256, 56],
  30: ['BF16', 1, 2],
  34: ['TQ1_0', 256, 54],
  35: ['TQ2_0', 256, 66],
  39: ['MXFP4', 32, 17],
};

export const GGML_TYPE_F32 = 0;
export const GGML_TYPE_F16 = 1;

/** ggml's GGML_MAX_DIMS. */
export const GGUF_MAX_DIMS = 4;

/** Token types of `tokenizer.ggml.token_type` (llama.cpp's llama_token_type). */
export enum GgufTokenType {
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
}

/** Byte size of the data of a tensor with these dims, or an error when the row does not split into blocks. */
export function ggmlTensorBytes(type: number, dims: readonly bigint[]): bigint | string {
  const info = GGML_TYPES[type];
  if (!info) return `unknown tensor type ${type}`;
  const [name, blockElements, blockBytes] = info;
  const rowElements = dims[0] ?? 1n;
  if (rowElements % BigInt(blockElements) !== 0n) {
    return `row of ${rowElements} elements is not a multiple of ${name}'s block of ${blockElements}`;
  }
  let bytes = (rowElements / BigInt(blockElements)) * BigInt(blockBytes);
  for (const d of dims.slice(1)) bytes *= d;
  return bytes;
}
