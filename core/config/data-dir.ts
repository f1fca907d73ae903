/**
 * Where a workstation keeps its conversations, logs, control token and models when no `--data-dir` says: `$XDG_DATA_HOME/manifold`, else
 * `~/.local/share/manifold`.
 */
import os from 'node:os';
import { join } from 'node:path';

export function defaultDataDir(): string {
  return join(process.env.XDG_DATA_HOME ?? join(os.homedir(), '.local', 'share'), 'manifold');
}
