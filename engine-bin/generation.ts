/**
 * One generation on a slot the scheduler granted: the slot keeps the prefix it shares with the prompt
 * (adaptStateToTokens) and evaluates only the rest, tokens are sampled with the request's options (penalties, logit bias,
 * end-of-generation tokens banned for ignoreEos, its grammar), text streams through the incremental detokenizer and the
 * stop-string matcher, and the result is a GenerateDone with its timings. Also the checks a prompt passes
 * before it waits for a slot, and the result of a request cancelled while it waited.
 */
import { LlamaGrammarEvaluationState, TokenBias, type LlamaGrammar, type LlamaModel, type Token } from 'node-llama-cpp';
import type { GenerateDone, GenerateRequest, GeneratedLogprob, Sampling } from '../common/engine-protocol.js';
import type { PrefixCacheReport } from '../common/prefix-cache.js';
import { EngineError } from './engine-error.js';
import type { Slot } from './slot.js';
import { StopStringMatcher } from './stop-strings.js';
import { generatedLogprob } from './token-logprobs.js';
import { ThinkingBudget } from './thinking-budget.js';
import { TokenTextStream } from './token-text.js';

/** Where a running generation reports to. */
export interface GenerationSink {
  started(info: { slot: number; reusedTokens: number; queuedMs: number; prefixCache?: PrefixCacheReport }): void;
  tokens(chunk: { tokens: number[]; text: string; logprobs?: GeneratedLogprob[] }): void;
}

export interface Generation {
  readonly request: GenerateRequest;
  readonly slot: Slot;
  readonly model: LlamaModel;
  /** The request's compiled grammar (grammar-cache.ts), when it has one. */
  readonly grammar: LlamaGrammar | undefined;
  /** Tokens one slot holds. */
  readonly contextSize: number;
  readonly vocabularySize: number;
  /** How long the request waited for its slot. */
  readonly queuedMs: number;
  /** When the slot was granted (performance.now()): prefill time runs from it, the prefix cache's save of the evicted conversation and restore included. */
  readonly grantedAt: number;
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

/**
 * The detokenizer of a generation: control tokens are left out of the text, except `preserved` ones (a
 * thinking model's tags), which are written out, as llama-server writes its `preserved_tokens`.
 */
function textOfTokens(model: LlamaModel, preserved: readonly string[]): (tokens: readonly number[], previous: readonly number[]) => string {
  const plain = (tokens: readonly number[], previous: readonly number[]): string =>
    model.detokenize(asTokens(tokens), false, asTokens(previous.slice(-DETOKENIZE_CONTEXT)));
  const kept = new Set(preserved.map((text) => model.tokenize(text, true)).flatMap((ids) => (ids.length === 1 ? [ids[0] as number] : [])));
  if (kept.size === 0) return plain;
  return (tokens, previous) => {
    if (!tokens.some((token) => kept.has(token))) return plain(tokens, previous);
    let text = '';
    let run: number[] = [];
    const context = [...previous];
    for (const token of tokens) {
      if (!kept.has(token)) {
        run.push(token);
        continue;
      }
      text += run.length > 0 ? plain(run, context) : '';
      context.push(...run, token);
      run = [];
      text += model.detokenize([token as Token], true);
    }
    return text + (run.length > 0 ? plain(run, context) : '');
  };
}

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
  if (request.grammar !== undefined && request.ignoreEos) {
    throw new EngineError('bad_message', 'ignoreEos cannot be used with a grammar: once the grammar is complete, only end of generation may follow');
  }
  const biased = request.sampling.logitBias.find(([t]) => t >= vocabularySize);
  if (biased !== undefined)
    throw new EngineError('bad_message', `logit bias: token id ${biased[0]} is outside the model's vocabulary of ${vocabularySize} tokens`);
}

/** Runs `generation` to its end (a stop string, end of generation, cancel or the token limit). */
export async function generateOnSlot(generation: Generation): Promise<GenerateDone> {
  const { request, slot, model, contextSize, queuedMs, sink } = generation;
  try {
    const sequence = slot.sequence;
    // Prefill time runs from the grant of the slot to the first token: keeping the cached prefix is part of it.
    const prefillStarted = generation.grantedAt;
    const keep = Math.min(sequence.compareContextTokens(asTokens(request.tokens)).firstDifferentIndex, request.tokens.length - 1);
    await sequence.adaptStateToTokens(asTokens(request.tokens.slice(0, keep)), false);
    const reusedTokens = sequence.nextTokenIndex;
    sink.started({ slot: slot.index, reusedTokens, queuedMs });

    const maxTokens = Math.min(request.maxTokens, contextSize - request.tokens.length);
    const history = [...request.tokens];
    const { sampling } = request;
    const textStream = new TokenTextStream(textOfTokens(model, request.preservedTokens));
    const stops = new StopStringMatcher(request.stop);
    const generated: number[] = [];
    let text = '';
    let stoppedBy: string | null = null;
    let finishReason: GenerateDone['finishReason'] = 'stop';
    let firstTokenAt = 0;

    const evaluateOptions: Parameters<typeof sequence.evaluate>[1] = {
      temperature: sampling.temperature,
      topK: sampling.topK,
      topP: sampling.topP,
      minP: sampling.minP,
      ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
      ...(penalized(sampling)
        ? {
            repeatPenalty: {
              punishTokens: () => asTokens(history.slice(-sampling.repeatLastN)),
              maxPunishTokens: sampling.repeatLastN,
              penalty: sampling.repeatPenalty,
              presencePenalty: sampling.presencePenalty,
              frequencyPenalty: sampling.frequencyPenalty,
            },
          }
        : {}),
      ...tokenBiasOf(request, model, generation.vocabularySize),
      ...(generation.grammar ? { grammarEvaluationState: new LlamaGrammarEvaluationState({ model, grammar: generation.grammar }) } : {}),
    };
    // A thinking budget ends the thinking by writing its end tag once the budget is spent (not under a grammar, which the tag would break).
    const budget = request.thinkingBudget && !generation.grammar ? new ThinkingBudget(request.thinkingBudget) : null;
    /** A token into the answer: its text through the detokenizer and the stop strings, out to the sink; true when the answer is over. */
    const take = (token: number, probabilities?: ReadonlyMap<Token, number>): { over: boolean; piece: string } => {
      generated.push(token);
      history.push(token);
      const piece = textStream.push(token);
      const { release, stoppedBy: matched } = stops.push(piece);
      text += release;
      const logprobs = probabilities
        ? [generatedLogprob(model, generated.slice(-DETOKENIZE_CONTEXT - 1, -1), token, probabilities, request.logprobs ?? 0)]
        : undefined;
      sink.tokens({ tokens: [token], text: release, ...(logprobs ? { logprobs } : {}) });
      if (matched !== null) stoppedBy = matched;
      else if (generation.cancelled()) finishReason = 'cancelled';
      else if (generated.length >= maxTokens) finishReason = 'length';
      return { over: matched !== null || finishReason !== 'stop', piece };
    };
    let input = asTokens(request.tokens.slice(reusedTokens));
    if (budget?.dueAtOnce()) {
      const forced = model.tokenize(budget.end, true) as number[];
      forced.forEach((token) => take(token));
      input = asTokens([...input, ...forced]);
    }
    for (;;) {
      // evaluate() is this with no metadata, unwrapped a token at a time: calling it directly saves that hop per token.
      const steps = sequence.evaluateWithMetadata(input, request.logprobs === undefined ? {} : { probabilities: true }, evaluateOptions);
      let forced: number[] | null = null;
      let last = 0;
      for await (const step of steps) {
        const token = step.token as number;
        if (!firstTokenAt) {
          firstTokenAt = performance.now();
          generation.onFirstToken();
        }
        const { over, piece } = take(token, (step as { probabilities?: ReadonlyMap<Token, number> }).probabilities);
        if (over) break;
        if (budget?.spend(piece)) {
          forced = model.tokenize(budget.end, true) as number[];
          last = token;
          break;
        }
      }
      if (!forced) break;
      // The last sampled token was not evaluated yet: it goes in first, then the end tag, and sampling goes on after it.
      if (forced.some((token) => take(token).over)) break;
      input = asTokens([last, ...forced]);
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

/** Whether any of the penalties (llama.cpp's penalties sampler: repeat, presence, frequency) is on. */
const penalized = (sampling: Sampling): boolean =>
  sampling.repeatLastN > 0 && (sampling.repeatPenalty !== 1 || sampling.presencePenalty !== 0 || sampling.frequencyPenalty !== 0);

/**
 * The logits of a token bias, in the map the addon reads: TokenBias.set() ignores end-of-generation
 * tokens, so the entries go straight into it (node-llama-cpp 3.21.1, pinned; the ignoreEos and
 * logit_bias tests fail if this stops working). Each value is added to its token's logit (llama.cpp's
 * logit-bias sampler); -Infinity bans the token.
 */
function tokenBias(model: LlamaModel, logits: Iterable<readonly [number, number]>): TokenBias {
  const bias = new TokenBias(model.tokenizer);
  const entries = (bias as unknown as { _biases: Map<number, number> })._biases;
  for (const [token, logit] of logits) entries.set(token, logit);
  return bias;
}

/** The end-of-generation ban for ignoreEos, per model (its end-of-generation tokens found once). */
const endOfGenerationTokens = new WeakMap<LlamaModel, number[]>();

function endOfGenerationOf(model: LlamaModel, vocabularySize: number): number[] {
  let tokens = endOfGenerationTokens.get(model);
  if (!tokens) {
    tokens = [];
    for (let token = 0; token < vocabularySize; token++) if (model.isEogToken(token as Token)) tokens.push(token);
    endOfGenerationTokens.set(model, tokens);
  }
  return tokens;
}

/** The request's token bias: its logit bias (OpenAI's -100 bans), and the ban of end-of-generation tokens for ignoreEos (which wins). */
function tokenBiasOf(request: GenerateRequest, model: LlamaModel, vocabularySize: number): { tokenBias?: TokenBias } {
  if (!request.ignoreEos && request.sampling.logitBias.length === 0) return {};
  const logits = new Map<number, number>(request.sampling.logitBias.map(([token, bias]) => [token, bias <= -100 ? -Infinity : bias]));
  if (request.ignoreEos) for (const token of endOfGenerationOf(model, vocabularySize)) logits.set(token, -Infinity);
  return { tokenBias: tokenBias(model, logits) };
}
