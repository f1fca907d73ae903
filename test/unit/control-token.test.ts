/** The control token kept in the data dir: made once with mode 0600, the same on every later start, replaced on rotate. */
import { chmod, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controlToken } from '../../core/control-token.js';

const fresh = (): Promise<string> => mkdtemp(join(tmpdir(), 'manifold-token-'));

describe('controlToken', () => {
  it('makes a token on the first run, in <dataDir>/control-token with mode 0600, and gives the same one after', async () => {
    const dir = join(await fresh(), 'not-yet-made');
    const first = await controlToken(dir);
    expect(first).toMatch(/^[0-9a-f]{48}$/);
    expect((await readFile(join(dir, 'control-token'), 'utf8')).trim()).toBe(first);
    expect((await stat(join(dir, 'control-token'))).mode & 0o777).toBe(0o600);
    expect(await controlToken(dir)).toBe(first);
  });

  it('replaces the token on rotate and says so', async () => {
    const dir = await fresh();
    const first = await controlToken(dir);
    const notes: string[] = [];
    const second = await controlToken(dir, { rotate: true, note: (line) => notes.push(line) });
    expect(second).toMatch(/^[0-9a-f]{48}$/);
    expect(second).not.toBe(first);
    expect(await controlToken(dir)).toBe(second);
    expect(notes.join()).toContain('a new one replaces');
  });

  it('replaces a file that does not hold a token, and tightens a kept one to 0600', async () => {
    const dir = await fresh();
    await writeFile(join(dir, 'control-token'), 'hunter2\n');
    const notes: string[] = [];
    const token = await controlToken(dir, { note: (line) => notes.push(line) });
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    expect(notes.join()).toContain('did not hold a token');
    await chmod(join(dir, 'control-token'), 0o644);
    expect(await controlToken(dir)).toBe(token);
    expect((await stat(join(dir, 'control-token'))).mode & 0o777).toBe(0o600);
  });
});
