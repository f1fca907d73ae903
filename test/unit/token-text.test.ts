/** Incremental detokenizing holds split UTF-8 characters until they are whole. */
import { describe, expect, it } from 'vitest';
import { TokenTextStream } from '../../engine-bin/token-text.js';

// Each token is one byte; decoding is UTF-8 with replacement, like byte-fallback pieces.
const bytesDetokenize = (tokens: readonly number[]) => Buffer.from(tokens).toString('utf8');

describe('token text stream', () => {
  it('releases ASCII at once and a multi-byte character only when complete', () => {
    const stream = new TokenTextStream(bytesDetokenize);
    expect(stream.push(0x61)).toBe('a');
    const euro = [...Buffer.from('€')];
    expect(stream.push(euro[0]!)).toBe('');
    expect(stream.push(euro[1]!)).toBe('');
    expect(stream.push(euro[2]!)).toBe('€');
  });

  it('gives up on a broken sequence after four tokens instead of holding forever, and flushes the rest', () => {
    const stream = new TokenTextStream(bytesDetokenize);
    expect(stream.push(0xe2)).toBe('');
    expect(stream.push(0xe2)).toBe('');
    expect(stream.push(0xe2)).toBe('');
    expect(stream.push(0xe2)).toContain('\uFFFD');
    expect(stream.push(0xf0)).toBe('');
    expect(stream.flush()).toBe('\uFFFD');
  });

  it('passes the emitted tokens as context to the detokenizer', () => {
    const seen: number[][] = [];
    const stream = new TokenTextStream((tokens, previous) => {
      seen.push([...previous]);
      return String(tokens.length);
    });
    stream.push(1);
    stream.push(2);
    expect(seen).toEqual([[], [1]]);
  });
});
