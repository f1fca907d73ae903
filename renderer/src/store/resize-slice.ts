/**
 * The resize controls' state: what to change (context size, slots, GPU layers) on which replica or all,
 * the pre-check's verdict per replica before applying, each replica's stage while a rolling rebuild
 * runs, and the outcomes (Applied / RejectedIntact / RolledBack / Latched, with reasons and prefixes kept).
 */
import type { EventPayload } from '../../../common/contract.js';
import { REBUILD_STAGES, type RebuildChange, type ReplicaRebuildOutcome, type ReplicaVerdict } from '../../../common/rebuild.js';
import { messageOf, type SliceCreator } from './slice.js';

export interface ResizeForm {
  replica: number | 'all';
  contextSize: string;
  slots: string;
  gpuLayers: string;
}

export interface ResizeSlice {
  resizeForm: ResizeForm;
  verdicts: ReplicaVerdict[] | null;
  stages: Record<number, EventPayload<'rebuild'>['stage']>;
  outcomes: ReplicaRebuildOutcome[] | null;
  resizeBusy: boolean;
  resizeError: string | null;
  setResizeForm(patch: Partial<ResizeForm>): void;
  precheckResize(): Promise<void>;
  applyResize(): Promise<void>;
  applyRebuildEvent(progress: EventPayload<'rebuild'>): void;
}

/** The change the form describes; null when it names nothing valid. */
export function selectResizeChange(state: Pick<ResizeSlice, 'resizeForm'>): RebuildChange | null {
  const { contextSize, slots, gpuLayers } = state.resizeForm;
  const whole = (text: string): number | null => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : null);
  const change: RebuildChange = {};
  if (contextSize.trim()) {
    const n = whole(contextSize);
    if (n === null || n < 64) return null;
    change.contextSize = n;
  }
  if (slots.trim()) {
    const n = whole(slots);
    if (n === null || n < 1) return null;
    change.slots = n;
  }
  if (gpuLayers.trim()) {
    if (gpuLayers.trim() === 'auto') change.gpuLayers = 'auto';
    else {
      const n = whole(gpuLayers);
      if (n === null) return null;
      change.gpuLayers = n;
    }
  }
  return Object.keys(change).length ? change : null;
}

/** Apply is offered once the pre-check said every replica fits, and nothing is running. */
export function selectCanApply(state: Pick<ResizeSlice, 'resizeForm' | 'verdicts' | 'resizeBusy'>): boolean {
  return selectApplyHint(state) === null;
}

/** Why Apply is not offered now, in words for a hint beside it; null when it is. */
export function selectApplyHint(state: Pick<ResizeSlice, 'resizeForm' | 'verdicts' | 'resizeBusy'>): string | null {
  if (state.resizeBusy) return 'a resize is running';
  if (selectResizeChange(state) === null) return 'enter a new context size, slot count or GPU layers';
  if (state.verdicts === null) return 'Check the new sizes first: Apply is offered once they fit';
  return state.verdicts.every((v) => v.fits) ? null : 'the new sizes do not fit (see the check below)';
}

/**
 * How far a running resize is, 0..1: each replica it touches counts its stage (precheck, barrier,
 * rebuilding, done) out of the whole, so a rolling resize of all replicas fills the bar replica by replica.
 */
export function selectResizeProgress(state: Pick<ResizeSlice, 'stages' | 'resizeForm'>, replicaCount: number): number {
  const touched = state.resizeForm.replica === 'all' ? Math.max(1, replicaCount) : 1;
  const last = REBUILD_STAGES.length - 1;
  const done = Object.values(state.stages).reduce((sum, stage) => sum + REBUILD_STAGES.indexOf(stage) / last, 0);
  return Math.min(1, done / touched);
}

const FIELD_WORDS: Readonly<Record<string, string>> = {
  'change.contextSize': 'Context size',
  'change.slots': 'Slots',
  'change.gpuLayers': 'GPU layers',
  'change.kvType': 'KV type',
  replica: 'Replica',
};

/**
 * A refused pre-check or rebuild in the panel's words: without the call's name, the field named as its
 * control is (`precheckRebuild: change.contextSize: at most 4194304 (got 5000000)` → `Context size: at
 * most 4194304 (got 5000000)`).
 */
export function resizeErrorInWords(message: string): string {
  const text = message.replace(/^(precheckRebuild|rebuild): /, '');
  const field = /^([\w.]+): (.*)$/s.exec(text);
  const words = field ? FIELD_WORDS[field[1]!] : undefined;
  return words ? `${words}: ${field![2]!}` : text;
}

const prefixes = (n: number): string => `${n} prefix${n === 1 ? '' : 'es'}`;

/** One line per outcome, as the panel lists them. */
export function describeOutcome(o: ReplicaRebuildOutcome): string {
  switch (o.outcome) {
    case 'Applied':
      return `replica ${o.replica}: Applied — ${o.sizes.slots} slots × ${o.sizes.contextSize} tokens, ${prefixes(o.prefixes.kept)} kept${o.prefixes.dropped ? `, ${o.prefixes.dropped} dropped` : ''}`;
    case 'RejectedIntact':
      return `replica ${o.replica}: RejectedIntact (${o.stage}) — ${o.reason}`;
    case 'RolledBack':
      return `replica ${o.replica}: RolledBack — ${o.reason}; ${prefixes(o.prefixes.kept)} kept`;
    case 'Latched':
      return `replica ${o.replica}: Latched — ${o.reason}; rollback: ${o.rollback_error}`;
    case 'Skipped':
      return `replica ${o.replica}: Skipped — ${o.reason}`;
  }
}

export const createResizeSlice: SliceCreator<ResizeSlice> = (set, get, client) => ({
  resizeForm: { replica: 'all', contextSize: '', slots: '', gpuLayers: '' },
  verdicts: null,
  stages: {},
  outcomes: null,
  resizeBusy: false,
  resizeError: null,
  // Any change to the form voids the last verdict: apply only what was checked.
  setResizeForm: (patch) => set((s) => ({ resizeForm: { ...s.resizeForm, ...patch }, verdicts: null, resizeError: null })),
  precheckResize: async () => {
    const change = selectResizeChange(get());
    if (!change) return set({ resizeError: 'give a context size (≥ 64), a slot count (≥ 1) or GPU layers (a number or auto)', outcomes: null });
    // A new check starts a new round: the last round's outcomes no longer describe what is asked.
    set({ resizeBusy: true, resizeError: null, outcomes: null, stages: {} });
    try {
      set({ verdicts: await client.call('precheckRebuild', { replica: get().resizeForm.replica, change }) });
    } catch (error) {
      set({ resizeError: resizeErrorInWords(messageOf(error)) });
    } finally {
      set({ resizeBusy: false });
    }
  },
  applyResize: async () => {
    const change = selectResizeChange(get());
    if (!change || !selectCanApply(get())) return;
    set({ resizeBusy: true, resizeError: null, outcomes: null, stages: {} });
    try {
      set({ outcomes: await client.call('rebuild', { replica: get().resizeForm.replica, change }), verdicts: null });
    } catch (error) {
      set({ resizeError: resizeErrorInWords(messageOf(error)) });
    } finally {
      set({ resizeBusy: false });
    }
  },
  applyRebuildEvent: (progress) => set((s) => ({ stages: { ...s.stages, [progress.replica]: progress.stage } })),
});
