/**
 * The tokens a llama-server slot file holds (`POST /slots/{id}?action=save`), read from its header
 * without the KV data: llama.cpp's sequence state file (`u32 'ggsq'`, `u32` version 3, `u32` count,
 * that many `i32`) whose token list is llama-server's packed slot tokens (`-1`, `u32` version 1, `u32`
 * n, n token ids, then the media chunks; an older server wrote the plain ids). A prefix whose state
 * cannot be loaded into the new layout (another slot count or KV type) is evaluated again from these.
 */
import { open } from 'node:fs/promises';

const STATE_SEQ_MAGIC = 0x67677371; // 'ggsq'
const STATE_SEQ_VERSION = 3;
const PACKED_MARKER = -1;
const PACKED_VERSION = 1;

/** The token ids saved in llama-server slot file `path`; throws naming what does not match the format. */
export async function readSlotFileTokens(path: string): Promise<number[]> {
  const file = await open(path, 'r');
  try {
    const header = Buffer.alloc(12);
    await file.read(header, 0, 12, 0);
    if (header.readUInt32LE(0) !== STATE_SEQ_MAGIC) throw new Error(`${path} is not a llama.cpp sequence state file`);
    if (header.readUInt32LE(4) !== STATE_SEQ_VERSION)
      throw new Error(`${path} is a sequence state file of version ${header.readUInt32LE(4)}, not ${STATE_SEQ_VERSION}`);
    const count = header.readUInt32LE(8);
    const packed = Buffer.alloc(count * 4);
    const { bytesRead } = await file.read(packed, 0, packed.length, 12);
    if (bytesRead !== packed.length) throw new Error(`${path} ends inside its token list`);
    const ids = Array.from({ length: count }, (_, i) => packed.readInt32LE(i * 4));
    if (ids[0] !== PACKED_MARKER) return ids;
    if (ids[1] !== PACKED_VERSION) throw new Error(`${path} holds llama-server slot tokens of version ${ids[1]}, not ${PACKED_VERSION}`);
    const n = ids[2] ?? 0;
    const tokens = ids.slice(3, 3 + n);
    if (tokens.length !== n) throw new Error(`${path} names ${n} tokens and holds ${tokens.length}`);
    if ((ids[3 + n] ?? 0) !== 0) throw new Error(`${path} holds media chunks, which cannot be evaluated again from token ids`);
    return tokens;
  } finally {
    await file.close();
  }
}
