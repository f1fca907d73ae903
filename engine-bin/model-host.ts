/**
 * The model host: one node-llama-cpp model and one context whose sequences are the engine's slots, and the
 * API the message loop (engine-server.ts) calls. It owns the lifecycle — load (header check, model,
 * context, warm-up), the ready info, dispose — and composes the rest: the slot scheduler
 * (slot-scheduler.ts), the tiered prefix cache a granted slot is prepared by (prefix-cache.ts), one
 * generation on that slot (generation.ts), the embedding context (embedder.ts) and the live-resize
 * operations (model-resize.ts).
 */
import os from 'node:os';
import { getLlama, LlamaLogLevel, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel, type Token } from 'node-llama-cpp';
import type { Activity, GenerateDone, GenerateRequest, LoadOptions, ReadyInfo, Rebuilt, SlotView } from '../common/engine-protocol.js';
import type { Pool, PoolSizes, PrecheckVerdict, RebuildChange } from '../common/rebuild.js';
import { GgufFormatError, metadataText, type GgufHeader } from '../common/gguf/header-reader.js';
import { ModelFileError, readModelFileHeader } from '../common/node/gguf-file.js';
import { Embedder } from './embedder.js';
import { EngineError } from './engine-error.js';
import { GrammarCache } from './grammar-cache.js';
import { cancelledWhileQueued, checkPrompt, generateOnSlot, type GenerationSink } from './generation.js';
import { checkKvType, createContext, vocabularySize, type LoadedModel } from './model-context.js';
import { LiveResize } from './model-resize.js';
import { PrefixCache } from './prefix-cache.js';
import { makeSlots, type Slot } from './slot.js';
import { SlotScheduler } from './slot-scheduler.js';

export type LoadProgress = (stage: 'model' | 'context', progress: number) => void;

export class ModelHost {
  private llama: Llama | undefined;
  private loaded: LoadedModel | undefined;
  private loading = false;
  private modelLoads = 0;
  private readonly scheduler = new SlotScheduler<Slot>();
  private readonly embedder = new Embedder();
  private readonly grammars = new GrammarCache();
  private readonly prefixCache: PrefixCache;
  private readonly resize: LiveResize;

  constructor(private readonly log: (line: string) => void) {
    this.prefixCache = new PrefixCache(log);
    this.resize = new LiveResize({
      llama: () => this.llama!,
      install: (loaded) => this.install(loaded),
      loadModel: (options) => this.loadModel(options),
      readyInfo: (loadMs) => this.readyInfo(loadMs),
      scheduler: this.scheduler,
      log,
    });
  }

  get isLoaded(): boolean {
    return this.loaded !== undefined;
  }

  async load(options: LoadOptions, onProgress: LoadProgress): Promise<ReadyInfo> {
    if (this.loaded || this.loading || this.resize.isTornDown) throw new EngineError('already_loaded', 'a model is already loaded (or loading) in this engine');
    checkKvType(options);
    this.loading = true;
    const started = performance.now();
    try {
      const header = await checkModelFile(options.modelPath);
      this.llama ??= await getLlama({
        gpu: 'auto',
        build: 'never',
        progressLogs: false,
        logLevel: LlamaLogLevel.warn,
        logger: (level, message) => this.log(`llama.cpp ${level}: ${message.trimEnd()}`),
      });
      const model = await this.loadModel(options, (p) => onProgress('model', p));
      let context: LlamaContext;
      try {
        onProgress('context', 0);
        context = await createContext(model, options);
        onProgress('context', 1);
      } catch (error) {
        await model.dispose();
        throw error;
      }
      const slots = makeSlots(context, options.slots);
      await warmUp(model, slots[0]!.sequence);
      this.install({ model, context, slots, header, options, vocabularySize: vocabularySize(header) });
      return await this.readyInfo(performance.now() - started);
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError('load_failed', `loading ${options.modelPath} failed: ${(error as Error).message}`);
    } finally {
      this.loading = false;
    }
  }

  /** The pre-check of a rebuild: does `change` fit? Touches nothing. */
  async precheck(change: RebuildChange): Promise<PrecheckVerdict> {
    return this.resize.precheck(this.requireLoaded(), change);
  }

  /** A live resize's rebuild (model-resize.ts); `markTeardown` is called before anything is freed. */
  async rebuild(change: RebuildChange, skipPrecheck: boolean, markTeardown: () => void): Promise<Rebuilt> {
    await this.embedder.dispose();
    // A save behind the last generation finishes on the context it was made for.
    await this.prefixCache.settled();
    return this.resize.rebuild(this.requireLoaded(), change, skipPrecheck, markTeardown);
  }

  /** After a rebuild failed past its teardown: allocates `pools` at `sizes` (the old ones) again. */
  restore(pools: readonly Pool[], sizes: Partial<PoolSizes>): Promise<Rebuilt> {
    return this.resize.restore(pools, sizes);
  }

  async generate(id: number, request: GenerateRequest, sink: GenerationSink): Promise<GenerateDone> {
    const loaded = this.requireLoaded();
    const contextSize = loaded.context.contextSize;
    checkPrompt(request, contextSize, loaded.vocabularySize);
    const grammar = request.grammar === undefined ? undefined : await this.grammars.get(this.llama!, request.grammar);
    const arrived = performance.now();
    const slot = await this.scheduler.acquire(id, request.tokens, request.conversationId ?? null);
    const grantedAt = performance.now();
    const queuedMs = grantedAt - arrived;
    if (!slot) return cancelledWhileQueued(request, queuedMs);
    try {
      const prefixCache = await this.prefixCache.prepare(slot, request.tokens, request.borrow);
      return await generateOnSlot({
        request,
        slot,
        model: loaded.model,
        grammar,
        contextSize,
        vocabularySize: loaded.vocabularySize,
        queuedMs,
        grantedAt,
        sink: prefixCache ? { ...sink, started: (info) => sink.started({ ...info, prefixCache }) } : sink,
        cancelled: () => this.scheduler.isCancelled(id),
        onFirstToken: () => this.scheduler.startDecoding(slot),
      });
    } finally {
      this.scheduler.release(id, slot);
      this.prefixCache.saveBehind(slot);
    }
  }

  /** One embedding vector per input (embedder.ts). */
  embed(inputs: readonly (readonly number[])[]): Promise<number[][]> {
    return this.embedder.embed(this.requireLoaded(), inputs);
  }

  /** Marks a generation to stop at its next token (or drops it from the queue); false when unknown. */
  cancel(id: number): boolean {
    return this.scheduler.cancel(id);
  }

  slotsView(): SlotView[] {
    return this.scheduler.view();
  }

  activity(undrainedReplies: number): Activity {
    return { ...this.scheduler.activity(undrainedReplies), re_evaluation: this.resize.reEvaluation };
  }

  async dispose(): Promise<void> {
    await this.embedder.dispose();
    const loaded = this.loaded;
    this.install(undefined);
    // After the cache is off no save behind starts; one under way finishes before its context goes.
    await this.prefixCache.dispose();
    if (loaded) {
      await loaded.context.dispose();
      await loaded.model.dispose();
    }
    await this.resize.dispose();
    this.grammars.clear();
    await this.llama?.dispose();
    this.llama = undefined;
  }

  private install(loaded: LoadedModel | undefined): void {
    this.loaded = loaded;
    this.scheduler.useSlots(loaded?.slots);
    this.prefixCache.use(loaded?.options.prefixCache, loaded ? stateLayout(loaded) : '', loaded?.options.testOnlyFaults?.delayPrefixSaveMs);
  }

  private async loadModel(options: LoadOptions, onProgress?: (progress: number) => void): Promise<LlamaModel> {
    const model = await this.llama!.loadModel({
      modelPath: options.modelPath,
      gpuLayers: options.gpuLayers,
      defaultContextFlashAttention: options.flashAttention,
      ...(onProgress ? { onLoadProgress: onProgress } : {}),
    });
    this.modelLoads++;
    return model;
  }

  private async readyInfo(loadMs: number): Promise<ReadyInfo> {
    const { model, context, header, options, slots, vocabularySize: vocabSize } = this.loaded!;
    const vram = await this.llama!.getVramState();
    return {
      model: {
        name: metadataText(header, 'general.name'),
        architecture: metadataText(header, 'general.architecture'),
        trainContextSize: model.trainContextSize,
        vocabSize,
        parameters: model.fileInsights.totalParameters,
        fileBytes: header.fileSize,
      },
      sizes: {
        contextSize: context.contextSize,
        slots: slots.length,
        gpuLayers: model.gpuLayers,
        batchSize: context.batchSize,
        flashAttention: context.flashAttention,
        kvType: options.kvType,
        contextStateBytes: context.stateSize,
      },
      backend: this.llama!.gpu === false ? 'cpu' : this.llama!.gpu,
      vram: { total: vram.total, used: vram.used, free: vram.free },
      ram: { total: os.totalmem(), used: os.totalmem() - os.freemem(), free: os.freemem() },
      loadMs,
      modelLoads: this.modelLoads,
      ...(this.prefixCache.share ? { prefixCacheShare: this.prefixCache.share } : {}),
    };
  }

  private requireLoaded(): LoadedModel {
    if (this.loaded) return this.loaded;
    if (this.resize.isTornDown)
      throw new EngineError('not_loaded', 'this engine freed its pools for a rebuild and has not allocated them again; restore it or restart the engine');
    throw new EngineError('not_loaded', 'no model is loaded in this engine; send load first');
  }
}

/**
 * What a saved KV state depends on besides its tokens: the model file and the context's layout (cells per
 * slot, KV type, flash attention — which changes how V is laid out). An engine borrows another's state only
 * under the same (llama.cpp may crash on a state of another model).
 */
function stateLayout({ options, context, header }: LoadedModel): string {
  return JSON.stringify([options.modelPath, header.fileSize, context.contextSize, options.kvType, context.flashAttention]);
}

/** Tokens evaluated once after load, so the first request is not the one that pays for cold caches. */
const WARM_UP_TOKENS = 64;

/** Like llama-server's warm-up run: evaluate a short prompt on one slot, then clear it. */
async function warmUp(model: LlamaModel, sequence: LlamaContextSequence): Promise<void> {
  const token = (model.tokens.bos ?? 0) as Token;
  await sequence.evaluateWithoutGeneratingNewTokens(Array.from({ length: WARM_UP_TOKENS }, () => token));
  await sequence.clearHistory();
}

/** Our bounded header check and hyper-parameter bounds, before node-llama-cpp (native code) sees the file. */
async function checkModelFile(path: string): Promise<GgufHeader> {
  try {
    return await readModelFileHeader(path);
  } catch (error) {
    if (error instanceof ModelFileError) throw new EngineError(error.code === 'not_found' ? 'model_not_found' : 'model_invalid', error.message);
    if (error instanceof GgufFormatError) throw new EngineError('model_invalid', `${path} is not a usable GGUF model: ${error.message}`);
    throw error;
  }
}
