/**
 * The control token that guards the dashboard's WebSocket and the admin calls, kept in
 * `<dataDir>/control-token` (mode 0600) so a bookmarked dashboard link and an open tab keep working
 * across restarts. Made on the first run (24 random bytes, 48 hex digits); `rotate` (serve's
 * `--new-token`) replaces it, which locks out every tab holding the old one. A file that does not hold a
 * token of that form is replaced, and said so through `note`.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './chat/atomic-file.js';

const CONTROL_TOKEN_FILE = 'control-token';
const TOKEN_FORM = /^[0-9a-f]{48}$/;

export interface ControlTokenOptions {
  /** Make a new token even when one is kept. */
  rotate?: boolean;
  /** Told when a kept token is replaced (rotated, or the file was not a token). */
  note?: (line: string) => void;
}

/** The kept token of `dataDir`, made (or replaced when `rotate`) and written with mode 0600 as needed. */
export async function controlToken(dataDir: string, options: ControlTokenOptions = {}): Promise<string> {
  const path = join(dataDir, CONTROL_TOKEN_FILE);
  const kept = await readFile(path, 'utf8').then(
    (text) => text.trim(),
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw new Error(`cannot read the control token ${path}: ${error.message}`);
    },
  );
  if (kept !== null && TOKEN_FORM.test(kept) && !options.rotate) {
    // A file copied in with looser permissions is tightened: the token is a password.
    await chmod(path, 0o600);
    return kept;
  }
  if (kept !== null)
    options.note?.(
      options.rotate
        ? `control token: a new one replaces the one kept in ${path}; open dashboards must use the new link`
        : `control token: ${path} did not hold a token; a new one is written`,
    );
  const token = randomBytes(24).toString('hex');
  await mkdir(dataDir, { recursive: true });
  await writeFileAtomic(path, `${token}\n`);
  return token;
}
