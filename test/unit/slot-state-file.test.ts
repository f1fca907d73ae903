/** The token list of a llama-server slot file, read from its header (llama-server-rebuild.ts evaluates it again). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSlotFileTokens } from '../../core/llama-server/slot-state-file.js';

const dir = mkdtempSync(join(tmpdir(), 'manifold-slot-file-'));

/** A file as llama_state_seq_save_file writes it: magic, version, the packed ids, then (here) some KV bytes. */
function slotFile(name: string, packed: number[], magic = 0x67677371, version = 3): string {
  const header = Buffer.alloc(12);
  header.writeUInt32LE(magic, 0);
  header.writeUInt32LE(version, 4);
  header.writeUInt32LE(packed.length, 8);
  const ids = Buffer.alloc(packed.length * 4);
  packed.forEach((id, i) => ids.writeInt32LE(id, i * 4));
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat([header, ids, Buffer.from([1, 2, 3, 4, 5])]));
  return path;
}

describe('llama-server slot files', () => {
  it('reads the tokens of the packed form (marker, version 1, count, ids, no media) and of the plain one', async () => {
    expect(await readSlotFileTokens(slotFile('packed.bin', [-1, 1, 3, 10, 20, 30, 0]))).toEqual([10, 20, 30]);
    expect(await readSlotFileTokens(slotFile('plain.bin', [7, 8, 9]))).toEqual([7, 8, 9]);
  });

  it('refuses what it cannot read as tokens, naming the problem', async () => {
    await expect(readSlotFileTokens(slotFile('magic.bin', [1], 0x12345678))).rejects.toThrow('is not a llama.cpp sequence state file');
    await expect(readSlotFileTokens(slotFile('version.bin', [1], undefined, 2))).rejects.toThrow('sequence state file of version 2, not 3');
    await expect(readSlotFileTokens(slotFile('media.bin', [-1, 1, 1, 10, 1, 0]))).rejects.toThrow('holds media chunks');
    await expect(readSlotFileTokens(slotFile('short.bin', [-1, 1, 5, 10, 0]))).rejects.toThrow('names 5 tokens and holds 2');
  });
});
