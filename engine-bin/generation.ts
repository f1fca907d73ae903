/**
 * One generation on a slot the scheduler granted: the slot keeps the prefix it shares with the prompt
 * (adaptStateToTokens) and evaluates only the rest, tokens are sampled with the request's options (with
 * end-of-generation tokens banned for ignoreEos), text streams through the incremental detokenizer and the
 * stop-string matcher, and the result is a GenerateDone with its timings. Also the checks a prompt passes
 * before it waits for a slot, and the result of a request cancelled while it waited.
 */
import { TokenBias, type LlamaModel, type Token } from 'node-llama-cpp';
import type { GenerateDone, GenerateRequest } from '../common/engine-protocol.js';
import type { PrefixCacheReport } from '../common/prefix-cache.js';
import { EngineError } from './engine-error.js';
import type { Slot } from './slot.js';
import { StopStringMatcher } from './stop-strings.js';
import { TokenTextStream } from './token-text.js';

/** Where a running generation reports to. */
export interface GenerationSink {
  started(info: { slot: number; reusedTokens: number; queuedMs: number; prefixCache?: PrefixCacheReport }): void;
  tokens(chunk: { tokens: number[]; text: string }): void;
}

export interface Generation {
  readonly request: GenerateRequest;
  readonly slot: Slot;
  readonly model: LlamaModel;
  /** Tokens one slot holds. */
  readonly contextSize: number;
  readonly vocabularySize: number;
  /** How long the request waited for its slot. */
  readonly queuedMs: number;
  readonly sink: GenerationSink;
  /** Whether the request was asked to stop (checked after each token). */
  cancelled(): boolean;
  /** Called at the first generated token, when prefill is over. */
  onFirstToken(): void;
}

/** Token ids as node-llama-cpp's branded Token type (ids cross the protocol as plain numbers). */
const asTokens = (ids: readonly number[]): Token[] => ids as Token[];

/** Tokens given to the detokenizer as context before the new ones (enough for leading-space rules). */
const DETOKENIZE_CONTEXT = 16;

/** Refuses a prompt no slot can serve: one that leaves nothing to generate, or ids outside the vocabulary. */
export function checkPrompt(request: GenerateRequest, contextSize: number, vocabularySize: number): void {
  if (request.tokens.length >= contextSize) {
    throw new EngineError(
      'prompt_too_long',
      `prompt of ${request.tokens.length} tokens does not fit a slot's context of ${contextSize} tokens (at least one token must be left to generate)`,
    );
  }
  const outside = request.tokens.find((t) => t >= vocabularySize);
  if (outside !== undefined) throw new EngineError('bad_message', `token id ${outside} is outside the model's vocabulary of ${vocabularySize} tokens`);
}

/** Runs `generation` to its end (a stop string, end of generation, cancel or the token limit). */
export async function generateOnSlot(generation: Generation): Promise<GenerateDone> {
  const { request, slot, model, contextSize, queuedMs, sink } = generation;
  try {
    const sequence = slot.sequence;
    // Prefill time runs from the grant of the slot to the first token: keeping the cached prefix is part of it.
    const prefillStarted = performance.now();
    const keep = Math.min(sequence.compareContextTokens(asTokens(request.tokens)).firstDifferentIndex, request.tokens.length - 1);
    await sequence.adaptStateToTokens(asTokens(request.tokens.slice(0, keep)), false);
    const reusedTokens = sequence.nextTokenIndex;
    sink.started({ slot: slot.index, reusedTokens, queuedMs });

    const maxTokens = Math.min(request.maxTokens, contextSize - request.tokens.length);
    const history = [...request.tokens];
    const { sampling } = request;
    const textStream = new TokenTextStream((tokens, previous) => model.detokenize(asTokens(tokens), false, asTokens(previous.slice(-DETOKENIZE_CONTEXT))));
    const stops = new StopStringMatcher(request.stop);
    const generated: number[] = [];
    let text = '';
    let stoppedBy: string | null = null;
    let finishReason: GenerateDone['finishReason'] = 'stop';
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
      ...(request.ignoreEos ? { tokenBias: biasAgainstEndOfGeneration(model, generation.vocabularySize) } : {}),
    });
    for await (const next of iterator) {
      const token = next as number;
      if (!firstTokenAt) {
        firstTokenAt = performance.now();
        generation.onFirstToken();
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
      if (generation.cancelled()) {
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
  }
}

/** The result of a request cancelled while it waited for a slot. */
export function cancelledWhileQueued(request: GenerateRequest, queuedMs: number): GenerateDone {
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

/** The end-of-generation ban for ignoreEos, built once per model (on its tokenizer). */
const noEndOfGeneration = new WeakMap<LlamaModel, TokenBias>();

function biasAgainstEndOfGeneration(model: LlamaModel, vocabularySize: number): TokenBias {
  let bias = noEndOfGeneration.get(model);
  if (!bias) {
    // TokenBias.set() ignores end-of-generation tokens, so their entries go straight into the map the
    // addon reads (node-llama-cpp 3.21.1, pinned; the ignoreEos tests fail if this stops working).
    bias = new TokenBias(model.tokenizer);
    const entries = (bias as unknown as { _biases: Map<number, number> })._biases;
    for (let token = 0; token < vocabularySize; token++) if (model.isEogToken(token as Token)) entries.set(token, -Infinity);
    noEndOfGeneration.set(model, bias);
  }
  return bias;
}
