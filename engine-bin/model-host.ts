/**
 * The model host: one node-llama-cpp model and one context whose sequences are the engine's slots.
 * It owns slot choice, the FIFO of requests waiting for a slot, prefix reuse (a slot keeps the prompt
 * prefix it shares with the new request and evaluates only the rest), sampling, stop strings, cancel,
 * the counters behind the slots view and activity, and the engine's two memory operations of a live
 * resize (DESIGN §5): rebuild (teardown mark, free, allocate at new sizes) and restore (old sizes back).
 */
import os from 'node:os';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, TokenBias, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel, type Token } from 'node-llama-cpp';
import type { Activity, GenerateDone, GenerateRequest, LoadOptions, ReadyInfo, Rebuilt, SlotView } from '../common/engine-protocol.js';
import { changedSizes, MAX_CONTEXT_CELLS, poolSizesOf, touchedPools, type Pool, type PoolSizes, type PrecheckVerdict, type RebuildChange } from '../common/rebuild.js';
import { GgufFormatError, metadataArrayLength, metadataText, type GgufHeader } from '../common/gguf/header-reader.js';
import { ModelFileError, readModelFileHeader } from '../common/node/gguf-file.js';
import { EngineError } from './engine-error.js';
import { precheck } from './precheck.js';
import { makeSlots, type Slot } from './slot.js';
import { chooseSlot } from './slot-choice.js';
import { restorePrefixes, savePrefixes, type SavedPrefixes } from './slot-prefixes.js';
import { StopStringMatcher } from './stop-strings.js';
import { TokenTextStream } from './token-text.js';

interface Loaded {
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  readonly slots: Slot[];
  readonly header: GgufHeader;
  readonly options: LoadOptions;
  /** Tokens in the model's vocabulary, from the header (ids at or above it are refused). */
  readonly vocabularySize: number;
}

/** What is left of the engine between a rebuild's teardown and its allocation (or restore). */
interface TornDown {
  readonly header: GgufHeader;
  readonly vocabularySize: number;
  readonly options: LoadOptions;
  /** The model, when the weights pool was not touched. */
  readonly model: LlamaModel | null;
  readonly saved: SavedPrefixes;
}

interface SlotWaiter {
  readonly prompt: readonly number[];
  readonly conversationId: string | null;
  readonly grant: (slot: Slot | null) => void;
}

/** Where a running generation reports to. */
export interface GenerationSink {
  started(info: { slot: number; reusedTokens: number; queuedMs: number }): void;
  tokens(chunk: { tokens: number[]; text: string }): void;
}

export type LoadProgress = (stage: 'model' | 'context', progress: number) => void;

/** Where this engine saves slot states during a rebuild (removed when the engine stops). */
const STATE_ROOT = join(os.tmpdir(), `manifold-engine-${process.pid}`);

/** Token ids as node-llama-cpp's branded Token type (ids cross the protocol as plain numbers). */
const asTokens = (ids: readonly number[]): Token[] => ids as Token[];

/** Tokens given to the detokenizer as context before the new ones (enough for leading-space rules). */
const DETOKENIZE_CONTEXT = 16;

export class ModelHost {
  private llama: Llama | undefined;
  private loaded: Loaded | undefined;
  private loading = false;
  private readonly waiting: SlotWaiter[] = [];
  private readonly cancelled = new Set<number>();
  private readonly running = new Map<number, SlotWaiter | Slot>();
  private prefilling = 0;
  private decoding = 0;
  private finished = 0;
  private noEogBias: TokenBias | undefined;
  private modelLoads = 0;
  private torn: TornDown | undefined;
  private rebuilds = 0;

  constructor(private readonly log: (line: string) => void) {}

  get isLoaded(): boolean {
    return this.loaded !== undefined;
  }

  async load(options: LoadOptions, onProgress: LoadProgress): Promise<ReadyInfo> {
    if (this.loaded || this.loading || this.torn) throw new EngineError('already_loaded', 'a model is already loaded (or loading) in this engine');
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
      this.loaded = { model, context, slots, header, options, vocabularySize: vocabularySize(header) };
      return await this.readyInfo(performance.now() - started);
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError('load_failed', `loading ${options.modelPath} failed: ${(error as Error).message}`);
    } finally {
      this.loading = false;
    }
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

  /** The pre-check of a rebuild: does `change` fit? Touches nothing. */
  async precheck(change: RebuildChange): Promise<PrecheckVerdict> {
    const loaded = this.requireLoaded();
    return this.precheckTarget(loaded, this.targetOf(loaded, change), touchedPools(change));
  }

  private precheckTarget(loaded: Loaded, target: LoadOptions, pools: readonly Pool[]): Promise<PrecheckVerdict> {
    const { options, model } = loaded;
    return precheck({
      llama: this.llama!,
      model,
      current: { ...poolSizesOf(options), gpuLayers: model.gpuLayers, flashAttention: options.flashAttention, batchSize: options.batchSize },
      target: poolSizesOf(target),
      pools,
    });
  }

  /** The load options after `change`; refuses sizes no context may have. */
  private targetOf(loaded: Loaded, change: RebuildChange): LoadOptions {
    const target: LoadOptions = { ...loaded.options, ...changedSizes(poolSizesOf(loaded.options), change) };
    if (target.contextSize * target.slots > MAX_CONTEXT_CELLS) {
      throw new EngineError('bad_message', `${target.slots} slots × ${target.contextSize} tokens is more than the ${MAX_CONTEXT_CELLS} tokens a context may have`);
    }
    checkKvType(target);
    return target;
  }

  /**
   * Frees the pools `change` touches and allocates them at the new sizes. `markTeardown` is called after
   * the slots' states are saved and before anything is freed: a failure before it leaves the engine as it
   * was; after it, the engine has no context until this succeeds or `restore` does.
   */
  async rebuild(change: RebuildChange, skipPrecheck: boolean, markTeardown: () => void): Promise<Rebuilt> {
    const loaded = this.requireLoaded();
    const busy = this.busyWith();
    if (busy.length) throw new EngineError('busy', `the engine is busy with ${busy.join(', ')}; a rebuild needs it idle`);
    const target = this.targetOf(loaded, change);
    const pools = touchedPools(change);
    if (!skipPrecheck) {
      const verdict = await this.precheckTarget(loaded, target, pools);
      if (!verdict.fits) throw new EngineError('does_not_fit', verdict.reason);
    }
    const faults = loaded.options.testOnlyFaults;
    if (faults?.failAllocation === 'before_teardown') throw new EngineError('rebuild_failed', 'test-only fault: the allocation failed before the teardown mark');
    let mark = performance.now();
    const saved = await savePrefixes(loaded.slots, loaded.options.kvType, join(STATE_ROOT, `rebuild-${++this.rebuilds}`), this.log);
    const saveMs = performance.now() - mark;

    markTeardown();
    mark = performance.now();
    const keepModel = !pools.includes('weights');
    this.loaded = undefined;
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
    if (torn.model === null && !pools.includes('weights')) throw new EngineError('rebuild_failed', 'the weights were freed; a restore must include the weights pool');
    if (torn.options.testOnlyFaults?.failRestore) throw new EngineError('rebuild_failed', 'test-only fault: the restore failed');
    return this.allocate({ ...torn.options, ...sizes }, { saveMs: 0, teardownMs: 0 });
  }

  /** Allocates what the teardown freed at `options`' sizes, then brings the saved prefixes back. */
  private async allocate(options: LoadOptions, timings: { saveMs: number; teardownMs: number }): Promise<Rebuilt> {
    const torn = this.torn!;
    const started = performance.now();
    try {
      const model = torn.model ?? (await this.loadModel(options));
      // The end-of-generation bias is built on a model's tokenizer; a new model needs its own.
      if (!torn.model) this.noEogBias = undefined;
      let context: LlamaContext;
      try {
        context = await createContext(model, options);
      } catch (error) {
        if (!torn.model) await model.dispose();
        throw error;
      }
      const slots = makeSlots(context, options.slots);
      this.loaded = { model, context, slots, header: torn.header, options, vocabularySize: torn.vocabularySize };
      this.torn = undefined;
      const allocateMs = performance.now() - started;
      const restoring = performance.now();
      const restored = await restorePrefixes(torn.saved, slots, options.kvType, {
        hold: (slot) => {
          slot.state = 'prefill';
          this.prefilling++;
        },
        release: (slot) => {
          slot.state = 'idle';
          this.prefilling--;
          this.releaseSlot(slot);
        },
        log: this.log,
      });
      void restored.reEvaluated;
      const restoreMs = performance.now() - restoring;
      return { info: await this.readyInfo(allocateMs), prefixes: restored.report, timings: { ...timings, allocateMs, restoreMs } };
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError('rebuild_failed', `allocating ${options.slots} slots × ${options.contextSize} tokens failed: ${(error as Error).message}`);
    }
  }

  /** What keeps the engine from being idle, in the barrier's words. */
  private busyWith(): string[] {
    return [
      ...(this.prefilling || this.waiting.length ? ['prefill'] : []),
      ...(this.decoding ? ['decode'] : []),
    ];
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
    };
  }

  private requireLoaded(): Loaded {
    if (this.loaded) return this.loaded;
    if (this.torn) throw new EngineError('not_loaded', 'this engine freed its pools for a rebuild and has not allocated them again; restore it or restart the engine');
    throw new EngineError('not_loaded', 'no model is loaded in this engine; send load first');
  }

  async generate(id: number, request: GenerateRequest, sink: GenerationSink): Promise<GenerateDone> {
    const loaded = this.requireLoaded();
    const contextSize = loaded.context.contextSize;
    if (request.tokens.length >= contextSize) {
      throw new EngineError(
        'prompt_too_long',
        `prompt of ${request.tokens.length} tokens does not fit a slot's context of ${contextSize} tokens (at least one token must be left to generate)`,
      );
    }
    const outside = request.tokens.find((t) => t >= loaded.vocabularySize);
    if (outside !== undefined) throw new EngineError('bad_message', `token id ${outside} is outside the model's vocabulary of ${loaded.vocabularySize} tokens`);
    const arrived = performance.now();
    this.prefilling++;
    const slot = await this.acquireSlot(id, request.tokens, request.conversationId ?? null);
    const queuedMs = performance.now() - arrived;
    if (!slot) {
      this.prefilling--;
      this.finished++;
      return cancelledBeforeStart(request, queuedMs);
    }
    this.running.set(id, slot);
    let phase: 'prefill' | 'decode' = 'prefill';
    try {
      slot.conversationId = request.conversationId ?? null;
      const sequence = slot.sequence;
      const keep = Math.min(sequence.compareContextTokens(asTokens(request.tokens)).firstDifferentIndex, request.tokens.length - 1);
      await sequence.adaptStateToTokens(asTokens(request.tokens.slice(0, keep)), false);
      const reusedTokens = sequence.nextTokenIndex;
      sink.started({ slot: slot.index, reusedTokens, queuedMs });

      const maxTokens = Math.min(request.maxTokens, contextSize - request.tokens.length);
      const history = [...request.tokens];
      const { sampling } = request;
      const textStream = new TokenTextStream((tokens, previous) =>
        loaded.model.detokenize(asTokens(tokens), false, asTokens(previous.slice(-DETOKENIZE_CONTEXT))),
      );
      const stops = new StopStringMatcher(request.stop);
      const generated: number[] = [];
      let text = '';
      let stoppedBy: string | null = null;
      let finishReason: GenerateDone['finishReason'] = 'stop';
      const prefillStarted = performance.now();
      let firstTokenAt = 0;

      const iterator = sequence.evaluate(asTokens(request.tokens.slice(reusedTokens)), {
        temperature: sampling.temperature,
        topK: sampling.topK,
        topP: sampling.topP,
        minP: sampling.minP,
        ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
        ...(sampling.repeatPenalty !== 1
          ? { repeatPenalty: { punishTokens: () => asTokens(history.slice(-sampling.repeatLastN)), penalty: sampling.repeatPenalty } }
          : {}),
        ...(request.ignoreEos ? { tokenBias: this.biasAgainstEndOfGeneration(loaded) } : {}),
      });
      for await (const next of iterator) {
        const token = next as number;
        if (phase === 'prefill') {
          firstTokenAt = performance.now();
          phase = 'decode';
          slot.state = 'decode';
          this.prefilling--;
          this.decoding++;
        }
        generated.push(token);
        history.push(token);
        const { release, stoppedBy: matched } = stops.push(textStream.push(token));
        text += release;
        sink.tokens({ tokens: [token], text: release });
        if (matched !== null) {
          stoppedBy = matched;
          break;
        }
        if (this.cancelled.has(id)) {
          finishReason = 'cancelled';
          break;
        }
        if (generated.length >= maxTokens) {
          finishReason = 'length';
          break;
        }
      }
      if (stoppedBy === null) {
        const rest = stops.push(textStream.flush()).release + stops.flush();
        if (rest) {
          text += rest;
          sink.tokens({ tokens: [], text: rest });
        }
      }
      const finishedAt = performance.now();
      const decodeMs = firstTokenAt ? finishedAt - firstTokenAt : 0;
      return {
        finishReason,
        stoppedBy,
        text,
        completionTokens: generated,
        usage: { promptTokens: request.tokens.length, completionTokens: generated.length },
        slot: slot.index,
        reusedTokens,
        heldTokens: sequence.nextTokenIndex,
        timings: {
          queuedMs,
          prefillMs: (firstTokenAt || finishedAt) - prefillStarted,
          decodeMs,
          prefillTokens: request.tokens.length - reusedTokens,
          decodeTokensPerSecond: decodeMs > 0 ? ((generated.length - 1) * 1000) / decodeMs : 0,
        },
      };
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError('generate_failed', `generation failed: ${(error as Error).message}`);
    } finally {
      if (phase === 'prefill') this.prefilling--;
      else this.decoding--;
      this.finished++;
      this.running.delete(id);
      this.cancelled.delete(id);
      slot.state = 'idle';
      slot.lastUsed = Date.now();
      this.releaseSlot(slot);
    }
  }

  /** Marks a generation to stop at its next token (or drops it from the queue); false when unknown. */
  cancel(id: number): boolean {
    const entry = this.running.get(id);
    if (!entry) return false;
    const queuedAt = 'grant' in entry ? this.waiting.indexOf(entry) : -1;
    if (queuedAt >= 0) {
      this.waiting.splice(queuedAt, 1);
      this.running.delete(id);
      (entry as SlotWaiter).grant(null);
    } else {
      this.cancelled.add(id);
    }
    return true;
  }

  private acquireSlot(id: number, prompt: readonly number[], conversationId: string | null): Promise<Slot | null> {
    const { slots } = this.requireLoaded();
    if (this.waiting.length === 0) {
      const slot = this.pick(slots, prompt, conversationId);
      if (slot) return Promise.resolve(slot);
    }
    return new Promise((grant) => {
      const waiter: SlotWaiter = { prompt, conversationId, grant };
      this.waiting.push(waiter);
      this.running.set(id, waiter);
    });
  }

  /** Hands a freed slot to the oldest waiter, choosing for that waiter's prompt. */
  private releaseSlot(slot: Slot): void {
    const waiter = this.waiting.shift();
    if (!waiter) return;
    waiter.grant(this.pick(this.loaded?.slots ?? [slot], waiter.prompt, waiter.conversationId));
  }

  private pick(slots: Slot[], prompt: readonly number[], conversationId: string | null): Slot | null {
    const choice = chooseSlot(
      slots.map((s) => ({ index: s.index, idle: s.state === 'idle', tokens: s.sequence.contextTokens as readonly number[], lastUsed: s.lastUsed ?? 0, conversationId: s.conversationId })),
      prompt,
      conversationId,
    );
    if (!choice) return null;
    const slot = slots[choice.index]!;
    slot.state = 'prefill';
    return slot;
  }

  private biasAgainstEndOfGeneration(loaded: Loaded): TokenBias {
    if (!this.noEogBias) {
      // TokenBias.set() ignores end-of-generation tokens, so their entries go straight into the map the
      // addon reads (node-llama-cpp 3.21.1, pinned; the ignoreEos tests fail if this stops working).
      const bias = new TokenBias(loaded.model.tokenizer);
      const entries = (bias as unknown as { _biases: Map<number, number> })._biases;
      for (let token = 0; token < loaded.vocabularySize; token++) if (loaded.model.isEogToken(token as Token)) entries.set(token, -Infinity);
      this.noEogBias = bias;
    }
    return this.noEogBias;
  }

  slotsView(): SlotView[] {
    return (this.loaded?.slots ?? []).map((s) => ({
      slot: s.index,
      state: s.state,
      heldTokens: s.sequence.nextTokenIndex,
      conversationId: s.conversationId,
      lastUsed: s.lastUsed,
    }));
  }

  activity(undrainedReplies: number): Activity {
    return {
      pending_prefill: this.prefilling,
      running_decode: this.decoding,
      undrained_replies: undrainedReplies,
      finished: this.finished,
    };
  }

  async dispose(): Promise<void> {
    const loaded = this.loaded;
    const torn = this.torn;
    this.loaded = undefined;
    this.torn = undefined;
    if (loaded) {
      await loaded.context.dispose();
      await loaded.model.dispose();
    }
    if (torn) await torn.model?.dispose();
    await rm(STATE_ROOT, { recursive: true, force: true });
    await this.llama?.dispose();
    this.llama = undefined;
  }
}

function cancelledBeforeStart(request: GenerateRequest, queuedMs: number): GenerateDone {
  return {
    finishReason: 'cancelled',
    stoppedBy: null,
    text: '',
    completionTokens: [],
    usage: { promptTokens: request.tokens.length, completionTokens: 0 },
    slot: null,
    reusedTokens: 0,
    heldTokens: 0,
    timings: { queuedMs, prefillMs: 0, decodeMs: 0, prefillTokens: 0, decodeTokensPerSecond: 0 },
  };
}

const vocabularySize = (header: GgufHeader): number => metadataArrayLength(header.metadata.get('tokenizer.ggml.tokens'));

/** Tokens evaluated once after load, so the first request is not the one that pays for cold caches. */
const WARM_UP_TOKENS = 64;

/** Like llama-server's warm-up run: evaluate a short prompt on one slot, then clear it. */
async function warmUp(model: LlamaModel, sequence: LlamaContextSequence): Promise<void> {
  const token = (model.tokens.bos ?? 0) as Token;
  await sequence.evaluateWithoutGeneratingNewTokens(Array.from({ length: WARM_UP_TOKENS }, () => token));
  await sequence.clearHistory();
}

/** llama.cpp quantizes the V cache only with flash attention; say so instead of failing inside it. */
function checkKvType(options: LoadOptions): void {
  if (options.kvType.startsWith('q') && options.flashAttention === false) {
    throw new EngineError('load_failed', `KV type ${options.kvType} needs flashAttention: true (llama.cpp quantizes the V cache only with flash attention)`);
  }
}

function createContext(model: LlamaModel, options: LoadOptions): Promise<LlamaContext> {
  const kvType = options.kvType.toUpperCase() as 'F32' | 'F16' | 'Q8_0' | 'Q4_0';
  return model.createContext({
    contextSize: options.contextSize,
    sequences: options.slots,
    ...(options.threads ? { threads: options.threads } : {}),
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    flashAttention: options.flashAttention,
    experimentalKvCacheKeyType: kvType,
    experimentalKvCacheValueType: kvType,
    failedCreationRemedy: false,
  });
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
