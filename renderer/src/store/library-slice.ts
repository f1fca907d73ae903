/**
 * The Models page's library and downloads: the models folder with each model's metadata (the loaded one
 * marked, a suggested layout), the downloads as `download` events report them, and the actions on them
 * (download, cancel, delete, unload, load with the suggested layout); the Hub search (LM Studio's
 * Discover): repositories by words, a repository's GGUF files with their sizes, one click to download.
 */
import type { CallResult } from '../../../common/contract.js';
import type { DownloadProgress } from '../../../common/model-download.js';
import type { LibraryEntry } from '../../../common/model-library.js';
import type { LoadPlan } from './loader-slice.js';
import { messageOf, type SliceCreator } from './slice.js';

export interface LibrarySlice {
  library: CallResult<'listLibrary'> | null;
  downloadUri: string;
  /** The latest progress of each download this page has seen, by URI. */
  downloads: Record<string, DownloadProgress>;
  libraryError: string | null;
  setDownloadUri(uri: string): void;
  refreshLibrary(): Promise<void>;
  /** Core's downloads as they stand (on connect: a reloaded tab sees a running download, a restarted server drops stale ones). */
  refreshDownloads(): Promise<void>;
  startDownload(): Promise<void>;
  cancelDownload(uri: string): Promise<void>;
  deleteModel(path: string): Promise<void>;
  unloadModel(): Promise<void>;
  /** Takes the model and its suggested layout into the loader's path and plan. */
  useSuggested(entry: LibraryEntry): void;
  applyDownloadEvent(progress: DownloadProgress): void;
  /** The Hub search: its results, the files of the repository opened among them, and what went wrong. */
  hubResults: CallResult<'searchHub'>['models'] | null;
  hubRepo: { id: string; files: CallResult<'hubFiles'>['files'] } | null;
  hubError: string | null;
  searchHub(query: string): Promise<void>;
  openHubRepo(repo: string): Promise<void>;
  /** Downloads a file the Hub search found. */
  downloadHubFile(uri: string): Promise<void>;
}

/** What the library reads of the other slices: the header's info, and the loader it fills in. */
interface LibraryReads {
  refreshInfo(): Promise<void>;
  setModelPath(path: string): void;
  setPlan(patch: Partial<LoadPlan>): void;
}

export const createLibrarySlice: SliceCreator<LibrarySlice, LibraryReads> = (set, get, client) => {
  const attempt = async (work: () => Promise<unknown>): Promise<void> => {
    set({ libraryError: null });
    try {
      await work();
    } catch (error) {
      set({ libraryError: messageOf(error) });
    }
  };
  // The list fetched again after an action: its own failure is shown, but it never clears the action's.
  const reloadList = async (): Promise<void> => {
    try {
      set({ library: await client.call('listLibrary', {}) });
    } catch (error) {
      set({ libraryError: messageOf(error) });
    }
  };
  return {
    hubResults: null,
    hubRepo: null,
    hubError: null,
    searchHub: async (query) => {
      set({ hubError: null, hubRepo: null });
      try {
        set({ hubResults: (await client.call('searchHub', { query })).models });
      } catch (error) {
        set({ hubResults: null, hubError: messageOf(error) });
      }
    },
    openHubRepo: async (repo) => {
      set({ hubError: null });
      try {
        set({ hubRepo: { id: repo, files: (await client.call('hubFiles', { repo })).files } });
      } catch (error) {
        set({ hubError: messageOf(error) });
      }
    },
    downloadHubFile: async (uri) => {
      get().setDownloadUri(uri);
      await get().startDownload();
    },
    library: null,
    downloadUri: '',
    downloads: {},
    libraryError: null,
    setDownloadUri: (downloadUri) => set({ downloadUri }),
    refreshLibrary: () => attempt(reloadList),
    refreshDownloads: async () => {
      const listed = await client.call('listDownloads', {});
      set({ downloads: Object.fromEntries(listed.map((d) => [d.uri, d])) });
    },
    startDownload: async () => {
      const uri = get().downloadUri.trim();
      if (!uri) return set({ libraryError: 'give a Hugging Face URI (hf:owner/repo/file.gguf or hf:owner/repo:Q4_K_M) or a URL' });
      set({ libraryError: null });
      try {
        await client.call('downloadModel', { uri });
        set({ downloadUri: '' });
      } catch (error) {
        // A download that failed says so in its own line (with Dismiss); any other refusal here.
        if (get().downloads[uri]?.state !== 'failed') set({ libraryError: messageOf(error) });
      }
      await reloadList();
    },
    cancelDownload: async (uri) => {
      const ended = get().downloads[uri]?.state === 'failed';
      await attempt(() => client.call('cancelDownload', { uri }));
      if (ended) set((s) => ({ downloads: Object.fromEntries(Object.entries(s.downloads).filter(([key]) => key !== uri)) }));
    },
    deleteModel: async (path) => {
      await attempt(() => client.call('deleteModel', { path }));
      await reloadList();
    },
    unloadModel: async () => {
      await attempt(() => client.call('unloadModel', {}));
      await Promise.all([get().refreshInfo(), reloadList()]);
    },
    useSuggested: (entry) => {
      get().setModelPath(entry.path);
      const s = entry.suggested;
      if (s) get().setPlan({ replicas: s.replicas, contextSize: s.contextSize, slots: s.slots, device: s.device === 'cpu' ? 'cpu' : 'auto' });
    },
    applyDownloadEvent: (progress) => set((s) => ({ downloads: { ...s.downloads, [progress.uri]: progress } })),
  };
};
