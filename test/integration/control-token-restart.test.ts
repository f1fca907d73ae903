/**
 * The dashboard link survives a restart: `npm run serve` keeps its control token in the data dir, so the
 * token of the first start opens the control API of the second; `--new-token` replaces it, and the old
 * one is refused (401) while the new one works. `GET /control` is the check the UI makes.
 */
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServeChild } from '../helpers/serve-child.js';

/** Starts serve on `dataDir` (idle: no engines), runs `check` with its URL and token, then stops it with Ctrl-C. */
async function withServe(dataDir: string, extra: string[], check: (base: string, token: string) => Promise<void>): Promise<string> {
  const served = startServeChild(['--idle', '--port', '0', '--data-dir', dataDir, ...extra]);
  try {
    const [base, token] = await Promise.all([served.base(), served.token()]);
    await check(base, token);
    return token;
  } finally {
    served.child.kill('SIGINT');
    expect(await served.exited).toBe(0);
  }
}

const controlStatus = async (base: string, token: string | null): Promise<number> =>
  (await fetch(`${base}/control`, token === null ? {} : { headers: { authorization: `Bearer ${token}` } })).status;

describe('the control token across restarts', () => {
  it('keeps the token in <dataDir>/control-token, the same after a restart; --new-token locks the old one out', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'manifold-token-restart-'));
    const first = await withServe(dataDir, [], async (base, token) => {
      expect(await controlStatus(base, token)).toBe(204);
      expect(await controlStatus(base, null)).toBe(401);
      expect(await controlStatus(base, 'f'.repeat(48))).toBe(401);
      // The page's own form: ?token= on the URL.
      expect((await fetch(`${base}/control?token=${token}`)).status).toBe(204);
    });
    expect((await stat(join(dataDir, 'control-token'))).mode & 0o777).toBe(0o600);

    const second = await withServe(dataDir, [], async (base) => {
      expect(await controlStatus(base, first)).toBe(204);
      // An admin call with the old start's token passes the token check (then is refused for its empty body).
      const admin = await fetch(`${base}/admin/precheck`, {
        method: 'POST',
        headers: { authorization: `Bearer ${first}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(admin.status).toBe(400);
    });
    expect(second).toBe(first);

    const rotated = await withServe(dataDir, ['--new-token'], async (base, token) => {
      expect(token).not.toBe(first);
      expect(await controlStatus(base, first)).toBe(401);
      expect(await controlStatus(base, token)).toBe(204);
    });
    await withServe(dataDir, [], async (base, token) => {
      expect(token).toBe(rotated);
      expect(await controlStatus(base, first)).toBe(401);
    });
  });
});
