/**
 * Blocks (DESIGN §4): a prompt is cut into 64-token blocks, and block k's hash covers blocks 0..k
 * (each hash is seeded with the one before it), so equal hashes mean equal prefixes. Only whole blocks
 * are hashed. Hashes are 53-bit numbers built from two 32-bit mixes, usable directly as Map keys.
 */

export const BLOCK_TOKENS = 64;

const TWO_POW_21 = 2 ** 21;

/** The chained hashes of the whole blocks of `tokens` (at most `maxBlocks`). */
export function blockHashes(tokens: readonly number[], maxBlocks = Infinity): number[] {
  const count = Math.min(Math.floor(tokens.length / BLOCK_TOKENS), maxBlocks);
  const hashes = new Array<number>(count);
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let block = 0; block < count; block++) {
    const start = block * BLOCK_TOKENS;
    for (let i = start; i < start + BLOCK_TOKENS; i++) {
      const token = tokens[i]!;
      h1 = Math.imul(h1 ^ token, 0x01000193);
      h2 = Math.imul(h2 ^ token, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    // Finalise a copy for this block; the running state carries the chain into the next block.
    let f1 = h1 ^ (h1 >>> 16);
    f1 = Math.imul(f1, 0x85ebca6b);
    f1 ^= f1 >>> 13;
    let f2 = h2 ^ (h2 >>> 16);
    f2 = Math.imul(f2, 0xc2b2ae35);
    f2 ^= f2 >>> 16;
    hashes[block] = (f1 >>> 0) * TWO_POW_21 + (f2 >>> 11);
  }
  return hashes;
}

/**
 * The longest leading run of blocks `0..n-1` that `holds`. Hashes are chained, so whoever holds block k
 * holds every block before it: the run is found by halving, in a handful of probes however long it is.
 */
export function leadingRun(n: number, holds: (block: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (holds(mid - 1)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Leading blocks `a` shares with `b` from block `from` of `b` on (chained hashes: found by halving). */
export function sharedBlocks(a: readonly number[], b: readonly number[], from = 0): number {
  return leadingRun(Math.min(a.length, b.length - from), (i) => a[i] === b[from + i]);
}
