/**
 * The resize controls' state: what to change (context size, slots, GPU layers) on which replica or all,
 * the pre-check's verdict per replica before applying, each replica's stage while a rolling rebuild
 * runs, and the outcomes (Applied / RejectedIntact / RolledBack / Latched, with reasons and prefixes kept).
 */
import type { EventPayload } from '../../../common/contract.js';
import { REBUILD_STAGES, type RebuildChange, type ReplicaRebuildOutcome, type ReplicaVerdict } from '../../../common/rebuild.js';
import { messageOf, type SliceCreator } from './slice.js';

export interface RebuildForm {
  replica: number | 'all';
  contextSize: string;
  slots: string;
  gpuLayers: string;
}

export interface RebuildSlice {
  rebuildForm: RebuildForm;
  verdicts: ReplicaVerdict[] | null;
  stages: Record<number, EventPayload<'rebuild'>['stage']>;
  outcomes: ReplicaRebuildOutcome[] | null;
  rebuildBusy: boolean;
  rebuildError: string | null;
  setRebuildForm(patch: Partial<RebuildForm>): void;
  precheckRebuild(): Promise<void>;
  applyRebuild(): Promise<void>;
  applyRebuildEvent(progress: EventPayload<'rebuild'>): void;
}

/** The change the form describes; null when it names nothing valid. */
export function selectRebuildChange(state: Pick<RebuildSlice, 'rebuildForm'>): RebuildChange | null {
  const { contextSize, slots, gpuLayers } = state.rebuildForm;
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
export function selectCanApply(state: Pick<RebuildSlice, 'rebuildForm' | 'verdicts' | 'rebuildBusy'>): boolean {
  return selectApplyHint(state) === null;
}

/** Why Apply is not offered now, in words for a hint beside it; null when it is. */
export function selectApplyHint(state: Pick<RebuildSlice, 'rebuildForm' | 'verdicts' | 'rebuildBusy'>): string | null {
  if (state.rebuildBusy) return 'a resize is running';
  if (selectRebuildChange(state) === null) return 'enter a new context size, slot count or GPU layers';
  if (state.verdicts === null) return 'Check the new sizes first: Apply is offered once they fit';
  return state.verdicts.every((v) => v.fits) ? null : 'the new sizes do not fit (see the check below)';
}

/**
 * How far a running resize is, 0..1: each replica it touches counts its stage (precheck, barrier,
 * rebuilding, done) out of the whole, so a rolling resize of all replicas fills the bar replica by replica.
 */
export function selectRebuildProgress(state: Pick<RebuildSlice, 'stages' | 'rebuildForm'>, replicaCount: number): number {
  const touched = state.rebuildForm.replica === 'all' ? Math.max(1, replicaCount) : 1;
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
export function rebuildErrorInWords(message: string): string {
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

export const createRebuildSlice: SliceCreator<RebuildSlice> = (set, get, client) => ({
  rebuildForm: { replica: 'all', contextSize: '', slots: '', gpuLayers: '' },
  verdicts: null,
  stages: {},
  outcomes: null,
  rebuildBusy: false,
  rebuildError: null,
  // Any change to the form voids the last verdict: apply only what was checked.
  setRebuildForm: (patch) => set((s) => ({ rebuildForm: { ...s.rebuildForm, ...patch }, verdicts: null, rebuildError: null })),
  precheckRebuild: async () => {
    const change = selectRebuildChange(get());
    if (!change) return set({ rebuildError: 'give a context size (≥ 64), a slot count (≥ 1) or GPU layers (a number or auto)', outcomes: null });
    // A new check starts a new round: the last round's outcomes no longer describe what is asked.
    set({ rebuildBusy: true, rebuildError: null, outcomes: null, stages: {} });
    try {
      set({ verdicts: await client.call('precheckRebuild', { replica: get().rebuildForm.replica, change }) });
    } catch (error) {
      set({ rebuildError: rebuildErrorInWords(messageOf(error)) });
    } finally {
      set({ rebuildBusy: false });
    }
  },
  applyRebuild: async () => {
    const change = selectRebuildChange(get());
    if (!change || !selectCanApply(get())) return;
    set({ rebuildBusy: true, rebuildError: null, outcomes: null, stages: {} });
    try {
      set({ outcomes: await client.call('rebuild', { replica: get().rebuildForm.replica, change }), verdicts: null });
    } catch (error) {
      set({ rebuildError: rebuildErrorInWords(messageOf(error)) });
    } finally {
      set({ rebuildBusy: false });
    }
  },
  applyRebuildEvent: (progress) => set((s) => ({ stages: { ...s.stages, [progress.replica]: progress.stage } })),
});
