/**
 * The loader's sources of models: the recently loaded ones (kept in `<data dir>/recent-models.json`,
 * newest first, ten at most) and the GGUF files found in the models folder (and its direct subfolders).
 */
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../chat/atomic-file.js';

const RECENT_KEPT = 10;
const recentSchema = z.array(z.string()).max(100);

export class ModelLibrary {
  constructor(
    private readonly dataDir: string,
    readonly modelsDir: string | null,
  ) {}

  private get recentFile(): string {
    return join(this.dataDir, 'recent-models.json');
  }

  async recent(): Promise<string[]> {
    try {
      return recentSchema.parse(JSON.parse(await readFile(this.recentFile, 'utf8')));
    } catch {
      return [];
    }
  }

  async noteLoaded(path: string): Promise<void> {
    const recent = [path, ...(await this.recent()).filter((p) => p !== path)].slice(0, RECENT_KEPT);
    await mkdir(this.dataDir, { recursive: true });
    await writeFileAtomic(this.recentFile, JSON.stringify(recent));
  }

  /** GGUF files in the models folder and its direct subfolders, with their sizes. */
  async found(): Promise<{ path: string; bytes: number }[]> {
    if (!this.modelsDir) return [];
    const found: { path: string; bytes: number }[] = [];
    const visit = async (dir: string, depth: number): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory() && depth > 0) await visit(path, depth - 1);
        else if (entry.isFile() && entry.name.toLowerCase().endsWith('.gguf')) found.push({ path, bytes: (await stat(path)).size });
      }
    };
    await visit(this.modelsDir, 1);
    return found.sort((a, b) => a.path.localeCompare(b.path));
  }
}
