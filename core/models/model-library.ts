/**
 * The loader's sources of models: the recently loaded ones (kept in `<data dir>/recent-models.json`,
 * newest first, ten at most) and the GGUF files found in the models folder (and its direct subfolders,
 * not the downloads' `.partial` staging folder); the library view of that folder (each model's metadata,
 * the loaded one marked, a split model as one entry) and deleting from it.
 */
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { z } from 'zod';
import type { LayoutSuggestion, LibraryEntry } from '../../common/model-library.js';
import type { GgufHeader } from '../../common/gguf/header-reader.js';
import { readModelFileHeader } from '../../common/node/gguf-file.js';
import { writeFileAtomic } from '../chat/atomic-file.js';
import { modelFacts } from './model-inspector.js';

const RECENT_KEPT = 10;
/** `name-00002-of-00003.gguf`: a split model's part (group 1: the base, 2: the part, 3: the count). */
const SPLIT_PART = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;

export class LibraryError extends Error {
  override readonly name = 'LibraryError';
}
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

  async noteLoaded(given: string): Promise<void> {
    // One entry per file, however its path was written.
    const path = resolve(given);
    const recent = [path, ...(await this.recent()).filter((p) => resolve(p) !== path)].slice(0, RECENT_KEPT);
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
        if (entry.isDirectory() && depth > 0 && !entry.name.startsWith('.')) await visit(path, depth - 1);
        else if (entry.isFile() && entry.name.toLowerCase().endsWith('.gguf')) found.push({ path, bytes: (await stat(path)).size });
      }
    };
    await visit(this.modelsDir, 1);
    return found.sort((a, b) => a.path.localeCompare(b.path));
  }

  /**
   * The models folder as a library: one entry per model (a split model's first part, its parts' bytes
   * summed); the loaded model first when it was loaded from elsewhere (its `file` then its whole path).
   */
  async list(loadedPath: string | null, suggest: (header: GgufHeader) => LayoutSuggestion): Promise<LibraryEntry[]> {
    const found = await this.found();
    if (loadedPath !== null && !found.some((f) => resolve(f.path) === resolve(loadedPath))) {
      found.unshift({
        path: loadedPath,
        bytes: await stat(loadedPath).then(
          (s) => s.size,
          () => 0,
        ),
      });
    }
    const entries: LibraryEntry[] = [];
    for (const { path, bytes } of found) {
      const split = SPLIT_PART.exec(basename(path));
      if (split && Number(split[2]) !== 1) continue;
      const parts = split ? found.filter((f) => dirname(f.path) === dirname(path) && SPLIT_PART.exec(basename(f.path))?.[1] === split[1]) : [{ path, bytes }];
      const entry: LibraryEntry = {
        path,
        file: this.modelsDir !== null && resolve(path).startsWith(resolve(this.modelsDir) + sep) ? relative(this.modelsDir, path) : path,
        bytes: parts.reduce((sum, p) => sum + p.bytes, 0),
        name: null,
        architecture: null,
        parameters: null,
        quantisation: null,
        contextLength: null,
        loaded: loadedPath !== null && resolve(loadedPath) === resolve(path),
        error: null,
        suggested: null,
      };
      try {
        const header = await readModelFileHeader(path);
        const { name, architecture, parameters, quantisation, contextLength } = modelFacts(header);
        Object.assign(entry, { name, architecture, parameters: split ? null : parameters, quantisation, contextLength, suggested: suggest(header) });
      } catch (error) {
        entry.error = (error as Error).message;
      }
      entries.push(entry);
    }
    return entries;
  }

  /** Deletes a model of the models folder (every part of a split one); never the loaded one, nor a file elsewhere. */
  async remove(path: string, loadedPath: string | null): Promise<string[]> {
    if (!this.modelsDir) throw new LibraryError('there is no models folder to delete from');
    const target = resolve(this.modelsDir, path);
    if (!target.startsWith(resolve(this.modelsDir) + sep) || !target.toLowerCase().endsWith('.gguf')) {
      throw new LibraryError(`path: ${path} is not a model in the models folder ${this.modelsDir}`);
    }
    const split = SPLIT_PART.exec(basename(target));
    const found = (await this.found()).map((f) => f.path);
    if (!found.includes(target)) throw new LibraryError(`path: no model ${path} in ${this.modelsDir}`);
    if (loadedPath !== null && resolve(loadedPath) === target) throw new LibraryError(`${basename(target)} is loaded: unload it first`);
    const files = split ? found.filter((p) => dirname(p) === dirname(target) && SPLIT_PART.exec(basename(p))?.[1] === split[1]) : [target];
    for (const file of files) await rm(file, { force: true });
    return files;
  }
}
