/**
 * The model loader's state: the path (typed, picked in a dialog, recent, or found in the models folder),
 * the inspection (metadata and whether it fits each card group), the plan (replicas, cards, context,
 * slots, arena), the load's steps as `load` events report them, and a clear error when it fails.
 */
import type { CallResult, EventPayload, ModelInspection } from '../../../common/contract.js';
import { messageOf, type SliceCreator } from './slice.js';

export interface LoadPlan {
  replicas: number;
  contextSize: number;
  slots: number;
  /** `auto`: the detected cards; `cpu`: CPU engines; `cards`: the cards listed in `cards`. */
  device: 'auto' | 'cpu' | 'cards';
  /** Card numbers, comma-separated, cut into `replicas` equal groups (with `device: 'cards'`). */
  cards: string;
  sharedArena: boolean;
}

export interface LoaderSlice {
  modelPath: string;
  plan: LoadPlan;
  inspection: ModelInspection | null;
  sources: CallResult<'listModels'> | null;
  loadSteps: EventPayload<'load'>[];
  loading: boolean;
  loaderError: string | null;
  setModelPath(path: string): void;
  setPlan(patch: Partial<LoadPlan>): void;
  refreshSources(): Promise<void>;
  pickModelFile(): Promise<void>;
  inspectModel(): Promise<void>;
  /** Loads the path with the plan; `replace` when a model serves and the user said yes. */
  loadModel(options?: { replace?: boolean }): Promise<void>;
  applyLoadEvent(step: EventPayload<'load'>): void;
}

/** "0, 1,2" → [0, 1, 2]; null when it is not a list of card numbers. */
export function parseCards(text: string): number[] | null {
  const parts = text.split(',').map((p) => p.trim());
  return parts.length > 0 && parts.every((p) => /^\d+$/.test(p)) ? parts.map(Number) : null;
}

/** The load's progress: the latest step, and 0..1 over validate → arena → replicas → ready. */
export function selectLoadProgress(state: Pick<LoaderSlice, 'loadSteps'>): { label: string; fraction: number } | null {
  const last = state.loadSteps.at(-1);
  if (!last) return null;
  const order = ['validate', 'arena', 'replicas', 'ready'] as const;
  if (last.step === 'failed') return { label: `failed: ${last.detail}`, fraction: 0 };
  const index = order.indexOf(last.step);
  return { label: `${last.step}: ${last.detail}`, fraction: Math.min(1, (index + (last.fraction ?? 0.5)) / (order.length - 1)) };
}

export const createLoaderSlice: SliceCreator<LoaderSlice, { refreshLibrary(): Promise<void>; refreshInfo(): Promise<void> }> = (set, get, client) => ({
  modelPath: '',
  plan: { replicas: 2, contextSize: 4096, slots: 2, device: 'auto', cards: '', sharedArena: false },
  inspection: null,
  sources: null,
  loadSteps: [],
  loading: false,
  loaderError: null,
  setModelPath: (modelPath) => set({ modelPath, inspection: null, loaderError: null }),
  setPlan: (patch) => set((s) => ({ plan: { ...s.plan, ...patch }, inspection: null })),
  refreshSources: async () => {
    try {
      set({ sources: await client.call('listModels', {}) });
    } catch (error) {
      set({ loaderError: messageOf(error) });
    }
  },
  pickModelFile: async () => {
    const picked = await client.call('pickModelFile', {});
    if (picked.path) get().setModelPath(picked.path);
    else if (picked.reason) set({ loaderError: picked.reason });
  },
  inspectModel: async () => {
    const { modelPath, plan } = get();
    if (!modelPath.trim()) return set({ loaderError: 'give the path of a .gguf model' });
    set({ loaderError: null, inspection: null });
    try {
      set({
        inspection: await client.call('inspectModel', { path: modelPath.trim(), replicas: plan.replicas, contextSize: plan.contextSize, slots: plan.slots }),
      });
    } catch (error) {
      set({ loaderError: messageOf(error) });
    }
  },
  loadModel: async (options = {}) => {
    const { modelPath, plan } = get();
    if (!modelPath.trim()) return set({ loaderError: 'give the path of a .gguf model' });
    const cards = parseCards(plan.cards);
    if (plan.device === 'cards' && !cards) return set({ loaderError: 'list the cards as numbers separated by commas, e.g. 0,1,2,3' });
    set({ loading: true, loaderError: null, loadSteps: [] });
    try {
      await client.call('loadModel', {
        path: modelPath.trim(),
        replicas: plan.replicas,
        contextSize: plan.contextSize,
        slots: plan.slots,
        sharedArena: plan.sharedArena,
        ...(plan.device === 'cpu' ? { gpus: 'cpu' as const } : plan.device === 'cards' && cards ? { gpus: cards } : {}),
        ...(options.replace ? { replace: true } : {}),
      });
      await Promise.all([get().refreshInfo(), get().refreshSources(), get().refreshLibrary()]);
    } catch (error) {
      set({ loaderError: messageOf(error) });
    } finally {
      set({ loading: false });
    }
  },
  applyLoadEvent: (step) => set((s) => ({ loadSteps: [...s.loadSteps, step].slice(-50) })),
});
