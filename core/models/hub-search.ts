/**
 * Finding a model on the Hugging Face Hub, as LM Studio's Discover does: the Hub's model search
 * (`GET /api/models?search=…&filter=gguf`, most downloaded first) and a repository's GGUF files with their
 * sizes (`GET /api/models/{repo}/tree/main`), through `HF_ENDPOINT` (or the `hubEndpoint` option) with
 * `HF_TOKEN` for gated repos. The Hub's JSON is checked by zod; an unreachable Hub is named as such.
 */
import { z } from 'zod';

export interface HubOptions {
  /** The Hub's base URL; default `HF_ENDPOINT`, else https://huggingface.co. */
  readonly endpoint?: string;
  readonly token?: string;
  readonly timeoutMs?: number;
}

export class HubSearchError extends Error {
  override readonly name = 'HubSearchError';
}

const modelsSchema = z.array(z.object({ id: z.string().min(1), downloads: z.number().nonnegative().optional(), likes: z.number().optional() }));
const treeSchema = z.array(
  z.object({ type: z.string(), path: z.string(), size: z.number().nonnegative(), lfs: z.object({ size: z.number().nonnegative() }).optional() }),
);

export interface HubModel {
  /** `owner/repo` */
  id: string;
  downloads: number;
}

export interface HubFile {
  /** The file's path in the repository. */
  path: string;
  bytes: number;
  /** What `manifold pull` and the Models page download it by. */
  uri: string;
}

const RESULTS = 20;

async function hubJson(path: string, options: HubOptions): Promise<unknown> {
  const endpoint = (options.endpoint ?? process.env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
  const token = options.token ?? process.env.HF_TOKEN;
  let response: Response;
  try {
    response = await fetch(`${endpoint}${path}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
  } catch {
    throw new HubSearchError(`cannot reach ${new URL(endpoint).host}: this machine is offline or the Hub is blocked`);
  }
  if (!response.ok) throw new HubSearchError(`${new URL(endpoint).host} answered ${response.status} to ${path.split('?')[0]}`);
  return response.json().catch(() => {
    throw new HubSearchError(`${new URL(endpoint).host} answered ${path.split('?')[0]} with something that is not JSON`);
  });
}

/** The Hub's GGUF repositories that match `query`, most downloaded first. */
export async function searchHub(query: string, options: HubOptions = {}): Promise<HubModel[]> {
  const params = new URLSearchParams({ search: query, filter: 'gguf', sort: 'downloads', direction: '-1', limit: String(RESULTS) });
  const parsed = modelsSchema.safeParse(await hubJson(`/api/models?${params}`, options));
  if (!parsed.success) throw new HubSearchError('the Hub answered the search in a shape it should not');
  return parsed.data.map((m) => ({ id: m.id, downloads: m.downloads ?? 0 }));
}

/** The GGUF files of repository `repo` (`owner/repo`), with their sizes, by name. */
export async function hubFiles(repo: string, options: HubOptions = {}): Promise<HubFile[]> {
  if (!/^[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*$/.test(repo)) throw new HubSearchError(`repo: ${repo} is not owner/name`);
  const parsed = treeSchema.safeParse(await hubJson(`/api/models/${repo}/tree/main?recursive=true`, options));
  if (!parsed.success) throw new HubSearchError(`the Hub listed ${repo} in a shape it should not`);
  return parsed.data
    .filter((f) => f.type === 'file' && f.path.toLowerCase().endsWith('.gguf'))
    .map((f) => ({ path: f.path, bytes: f.lfs?.size ?? f.size, uri: `hf:${repo}/${f.path}` }))
    .sort((a, b) => a.path.localeCompare(b.path));
}
