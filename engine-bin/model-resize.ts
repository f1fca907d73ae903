/**
 * Live resize, the engine's side (DESIGN §5): the pre-check of a change (touches nothing); the rebuild —
 * save the slots' prefixes, the teardown mark, free the touched pools, allocate them at the new sizes and
 * bring the prefixes back (slot-prefixes.ts); and the restore of the old sizes after a rebuild failed past
 * its mark. Between teardown and allocation it holds what is left of the engine (TornDown).
 */
import os from 'node:os';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';
import type { LoadOptions, ReadyInfo, ReEvaluation, Rebuilt } from '../common/engine-protocol.js';
import {
  changedSizes,
  MAX_CONTEXT_CELLS,
  poolSizesOf,
  touchedPools,
  type Pool,
  type PoolSizes,
  type PrecheckVerdict,
  type RebuildChange,
} from '../common/rebuild.js';
import type { GgufHeader } from '../common/gguf/header-reader.js';
import { EngineError } from './engine-error.js';
import { checkKvType, createContext, type LoadedModel } from './model-context.js';
import { precheck } from './precheck.js';
import { makeSlots, type Slot } from './slot.js';
import { restorePrefixes, savePrefixes, type SavedPrefixes } from './slot-prefixes.js';
import type { SlotScheduler } from './slot-scheduler.js';

/** What is left of the engine between a rebuild's teardown and its allocation (or restore). */
interface TornDown {
  readonly header: GgufHeader;
  readonly vocabularySize: number;
  readonly options: LoadOptions;
  /** The model, when the weights pool was not touched. */
  readonly model: LlamaModel | null;
  readonly saved: SavedPrefixes;
}

/** What a resize uses of the engine it resizes (model-host.ts). */
export interface ResizeHost {
  llama(): Llama;
  /** Makes `loaded` the engine's model and context (none: torn down), its slots the scheduler's. */
  install(loaded: LoadedModel | undefined): void;
  loadModel(options: LoadOptions): Promise<LlamaModel>;
  readyInfo(loadMs: number): Promise<ReadyInfo>;
  readonly scheduler: SlotScheduler<Slot>;
  log(line: string): void;
}

/** Where this engine saves slot states during a rebuild (removed when the engine stops). */
const STATE_ROOT = join(os.tmpdir(), `manifold-engine-${process.pid}`);

export class LiveResize {
  private torn: TornDown | undefined;
  private rebuilds = 0;
  /** The last allocation's re-evaluation of kept prefixes while it runs. */
  private reEvaluating: ReEvaluation | undefined;

  constructor(private readonly host: ResizeHost) {}

  /** Whether a rebuild has freed the pools and nothing has allocated them again. */
  get isTornDown(): boolean {
    return this.torn !== undefined;
  }

  /** How far the background re-evaluation of the last rebuild's kept prefixes is; null when none runs. */
  get reEvaluation(): ReEvaluation | null {
    return this.reEvaluating ? { ...this.reEvaluating } : null;
  }

  /** The pre-check of a rebuild: does `change` fit? Touches nothing. */
  precheck(loaded: LoadedModel, change: RebuildChange): Promise<PrecheckVerdict> {
    return this.precheckTarget(loaded, targetOf(loaded, change), touchedPools(change));
  }

  /**
   * Frees the pools `change` touches and allocates them at the new sizes. `markTeardown` is called after
   * the slots' states are saved and before anything is freed: a failure before it leaves the engine as it
   * was; after it, the engine has no context until this succeeds or `restore` does.
   */
  async rebuild(loaded: LoadedModel, change: RebuildChange, skipPrecheck: boolean, markTeardown: () => void): Promise<Rebuilt> {
    const busy = this.host.scheduler.busyWith();
    if (busy.length) throw new EngineError('busy', `the engine is busy with ${busy.join(', ')}; a rebuild needs it idle`);
    const target = targetOf(loaded, change);
    const pools = touchedPools(change);
    if (!skipPrecheck) {
      const verdict = await this.precheckTarget(loaded, target, pools);
      if (!verdict.fits) throw new EngineError('does_not_fit', verdict.reason);
    }
    const faults = loaded.options.testOnlyFaults;
    if (faults?.failAllocation === 'before_teardown')
      throw new EngineError('rebuild_failed', 'test-only fault: the allocation failed before the teardown mark');
    let mark = performance.now();
    const saved = await savePrefixes(loaded.slots, loaded.options.kvType, join(STATE_ROOT, `rebuild-${++this.rebuilds}`), this.host.log);
    const saveMs = performance.now() - mark;

    markTeardown();
    mark = performance.now();
    const keepModel = !pools.includes('weights');
    this.host.install(undefined);
    this.torn = { header: loaded.header, vocabularySize: loaded.vocabularySize, options: loaded.options, model: keepModel ? loaded.model : null, saved };
    await loaded.context.dispose();
    if (!keepModel) await loaded.model.dispose();
    const teardownMs = performance.now() - mark;
    if (faults?.failAllocation === 'after_teardown') throw new EngineError('rebuild_failed', 'test-only fault: the allocation failed after the teardown mark');
    return this.allocate(target, { saveMs, teardownMs });
  }

  /** After a rebuild failed past its teardown: allocates `pools` at `sizes` (the old ones) again. */
  async restore(pools: readonly Pool[], sizes: Partial<PoolSizes>): Promise<Rebuilt> {
    const torn = this.torn;
    if (!torn) throw new EngineError('rebuild_failed', 'nothing to restore: no rebuild has torn down this engine');
    if (torn.model === null && !pools.includes('weights'))
      throw new EngineError('rebuild_failed', 'the weights were freed; a restore must include the weights pool');
    if (torn.options.testOnlyFaults?.failRestore) throw new EngineError('rebuild_failed', 'test-only fault: the restore failed');
    return this.allocate({ ...torn.options, ...sizes }, { saveMs: 0, teardownMs: 0 });
  }

  /** Frees what a teardown kept (the model, when the weights were not touched) and the saved states. */
  async dispose(): Promise<void> {
    const torn = this.torn;
    this.torn = undefined;
    if (torn) await torn.model?.dispose();
    await rm(STATE_ROOT, { recursive: true, force: true });
  }

  private precheckTarget(loaded: LoadedModel, target: LoadOptions, pools: readonly Pool[]): Promise<PrecheckVerdict> {
    const { options, model } = loaded;
    return precheck({
      llama: this.host.llama(),
      model,
      current: { ...poolSizesOf(options), gpuLayers: model.gpuLayers, flashAttention: options.flashAttention, batchSize: options.batchSize },
      target: poolSizesOf(target),
      pools,
    });
  }

  /** Allocates what the teardown freed at `options`' sizes, then brings the saved prefixes back. */
  private async allocate(options: LoadOptions, timings: { saveMs: number; teardownMs: number }): Promise<Rebuilt> {
    const torn = this.torn!;
    const { scheduler } = this.host;
    const started = performance.now();
    try {
      const model = torn.model ?? (await this.host.loadModel(options));
      let context: LlamaContext;
      try {
        context = await createContext(model, options);
      } catch (error) {
        if (!torn.model) await model.dispose();
        throw error;
      }
      const slots = makeSlots(context, options.slots);
      this.host.install({ model, context, slots, header: torn.header, options, vocabularySize: torn.vocabularySize });
      this.torn = undefined;
      const allocateMs = performance.now() - started;
      const restoring = performance.now();
      const restored = await restorePrefixes(torn.saved, slots, options.kvType, {
        hold: (slot) => scheduler.hold(slot),
        release: (slot) => scheduler.unhold(slot),
        log: this.host.log,
      });
      if (restored.progress.total > 0) {
        const progress = restored.progress;
        this.reEvaluating = progress;
        const ended = (): void => {
          if (this.reEvaluating === progress) this.reEvaluating = undefined;
        };
        void restored.reEvaluated.then(ended, ended);
      }
      const restoreMs = performance.now() - restoring;
      return { info: await this.host.readyInfo(allocateMs), prefixes: restored.report, timings: { ...timings, allocateMs, restoreMs } };
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError('rebuild_failed', `allocating ${options.slots} slots × ${options.contextSize} tokens failed: ${(error as Error).message}`);
    }
  }
}

/** The load options after `change`; refuses sizes no context may have. */
function targetOf(loaded: LoadedModel, change: RebuildChange): LoadOptions {
  const target: LoadOptions = { ...loaded.options, ...changedSizes(poolSizesOf(loaded.options), change) };
  if (target.contextSize * target.slots > MAX_CONTEXT_CELLS) {
    throw new EngineError(
      'bad_message',
      `${target.slots} slots × ${target.contextSize} tokens is more than the ${MAX_CONTEXT_CELLS} tokens a context may have`,
    );
  }
  checkKvType(target);
  return target;
}
