/**
 * An OpenAI generation request made ready to run: the engine request for a parsed body (sampling, stop,
 * grammar from `response_format` or a forced tool call, logprobs, thinking budget), checked against the
 * loaded model (vocabulary, context), with what its response needs (id, kind, how its answer is read);
 * and the HTTP status of each way a generation can fail. generation-response.ts answers it.
 */
import { randomUUID } from 'node:crypto';
import { MAX_GENERATE_TOKENS, type GenerateRequest, type GenerateRequestInput } from '../../common/engine-protocol.js';
import { EngineRequestError } from '../engine/engine-client.js';
import { QueueFullError, QueueTimeoutError, RequestCancelledError } from '../queue/queue-errors.js';
import { NoReplicaError, ReplicaDiedError } from '../replicas/replica-errors.js';
import { TokenizerError, TokenizerUnavailableError } from '../tokenizer.js';
import type { Workstation } from '../workstation.js';
import { HttpError, toHttpError } from './http-error.js';
import type { ChatCompletionRequest, SamplingRequest } from './openai-schemas.js';
import { checkIgnoreEos, requestGrammar } from './response-format.js';
import { requestedLogprobs } from './logprobs.js';
import { thinkingBudgetOf, type ToolPlan } from './tool-calls-request.js';
import type { ReasoningPlan } from './chat-answer.js';
import type { CompletedAnswer } from './stored-completion.js';

export type Kind = 'chat' | 'text';

/** How a chat answer is read: its tool calls (tool-calls-request.ts) and its reasoning (chat-answer.ts). */
export interface AnswerPlan {
  tools: ToolPlan | null;
  reasoning: ReasoningPlan | null;
}

/** What a handler hands over: the parsed body, its prompt tokens, and for a chat how its answer is read and kept. */
export interface GenerationInput {
  kind: Kind;
  body: SamplingRequest;
  tokens: number[];
  maxTokens: number | null | undefined;
  /** When the request reached the front (performance.now()), for `timings.front_ms`. */
  arrivedAt: number;
  /** Null for a text completion. */
  plan?: AnswerPlan | null;
  /** Called with a chat answer once it is complete, before the response ends (`store: true`); null to keep nothing. */
  keep?: ((answer: CompletedAnswer) => Promise<void>) | null;
}

/** A generation ready to run and answer. */
export interface Generation extends GenerationInput {
  readonly request: GenerateRequestInput;
  /** The logprobs asked for (top n); undefined when none. */
  readonly logprobs: number | undefined;
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly plan: AnswerPlan | null;
  readonly keep: ((answer: CompletedAnswer) => Promise<void>) | null;
}

/** The generation for a handler's input, or the 400 that says what in the request cannot be served. */
export async function prepareGeneration(workstation: Workstation, input: GenerationInput): Promise<Generation> {
  const { kind, body, tokens, maxTokens } = input;
  const plan = input.plan ?? null;
  const grammar = await requestGrammar(body, (schema) => tokensOf(workstation, () => workstation.tokenizer.jsonSchemaGrammar(schema), 'response_format'));
  const logprobs = requestedLogprobs(body);
  // A forced tool call is generated under its grammar (routed, like any grammar, only to replicas that take one);
  // it never comes with response_format or grammar (tool-calls-schemas.ts refuses that).
  const finalGrammar = plan?.tools?.grammar ?? grammar;
  checkIgnoreEos(body, finalGrammar);
  const preservedTokens = plan?.reasoning || plan?.tools ? workstation.tokenizer.preservedTokens : [];
  const thinkingBudget = plan?.reasoning && kind === 'chat' ? budgetOf(body as ChatCompletionRequest, plan.reasoning) : undefined;
  const request = generateRequest(body, tokens, maxTokens, { grammar: finalGrammar, logprobs, preservedTokens, thinkingBudget });
  const vocabulary = workstation.vocabularySize;
  const outside = vocabulary > 0 ? body.logit_bias?.find(([token]) => token >= vocabulary) : undefined;
  if (outside)
    throw new HttpError(
      400,
      `logit_bias: token id ${outside[0]} is outside the model's vocabulary of ${vocabulary} tokens`,
      'invalid_request_error',
      'logit_bias',
    );
  const context = workstation.replicas.maxContext;
  if (context > 0 && tokens.length >= context) {
    throw new HttpError(
      400,
      `the prompt is ${tokens.length} tokens, and a slot holds ${context} (at least one token must be left to generate); shorten the prompt`,
      'invalid_request_error',
      kind === 'chat' ? 'messages' : 'prompt',
      'context_length_exceeded',
    );
  }
  return {
    ...input,
    plan,
    keep: input.keep ?? null,
    request,
    logprobs,
    id: `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: workstation.modelId,
  };
}

/** The engine request for a parsed body (every limit of the engine protocol was checked by its schema). */
export function generateRequest(
  body: SamplingRequest,
  tokens: number[],
  maxTokens: number | null | undefined,
  {
    grammar,
    logprobs,
    preservedTokens = [],
    thinkingBudget,
  }: {
    grammar?: string | undefined;
    logprobs?: number | undefined;
    preservedTokens?: readonly string[];
    thinkingBudget?: GenerateRequest['thinkingBudget'];
  } = {},
): GenerateRequestInput {
  const stop = body.stop === undefined || body.stop === null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  const conversationId = body.prompt_cache_key ?? body.user;
  return {
    tokens,
    ...(conversationId ? { conversationId } : {}),
    maxTokens: maxTokens ?? MAX_GENERATE_TOKENS,
    stop,
    ignoreEos: body.ignore_eos ?? false,
    ...(grammar !== undefined ? { grammar } : {}),
    ...(logprobs !== undefined ? { logprobs } : {}),
    ...(preservedTokens.length > 0 ? { preservedTokens: [...preservedTokens] } : {}),
    ...(thinkingBudget ? { thinkingBudget } : {}),
    sampling: {
      ...(body.temperature != null ? { temperature: body.temperature } : {}),
      ...(body.top_p != null ? { topP: body.top_p } : {}),
      ...(body.top_k != null ? { topK: body.top_k } : {}),
      ...(body.min_p != null ? { minP: body.min_p } : {}),
      ...(body.seed != null ? { seed: body.seed } : {}),
      ...(body.repeat_penalty != null ? { repeatPenalty: body.repeat_penalty } : {}),
      ...(body.repeat_last_n != null ? { repeatLastN: body.repeat_last_n } : {}),
      ...(body.presence_penalty != null ? { presencePenalty: body.presence_penalty } : {}),
      ...(body.frequency_penalty != null ? { frequencyPenalty: body.frequency_penalty } : {}),
      ...(body.logit_bias != null ? { logitBias: body.logit_bias } : {}),
    },
  };
}

/** The engine's thinking budget for a request that sets one (≥ 0) to a model whose thinking has an end tag. */
function budgetOf(body: ChatCompletionRequest, reasoning: ReasoningPlan): GenerateRequest['thinkingBudget'] {
  const tokens = thinkingBudgetOf(body);
  return tokens >= 0 && reasoning.tags.end ? { tokens, start: reasoning.tags.start, end: reasoning.tags.end, open: reasoning.open } : undefined;
}

export function mapGenerationError(workstation: Workstation, error: unknown): HttpError {
  const retryAfter = (): Record<string, string> => ({ 'retry-after': String(workstation.replicas.retryAfterSeconds()) });
  if (error instanceof QueueFullError) return new HttpError(429, error.message, 'rate_limit_error', null, 'rate_limit_exceeded', retryAfter());
  if (error instanceof QueueTimeoutError) return new HttpError(503, error.message, 'server_error', null, 'queue_timeout', retryAfter());
  if (error instanceof RequestCancelledError) return new HttpError(499, error.message, 'invalid_request_error', null, 'cancelled');
  if (error instanceof EngineRequestError && error.code === 'prompt_too_long')
    return new HttpError(400, error.message, 'invalid_request_error', 'messages', 'context_length_exceeded');
  if (error instanceof EngineRequestError && error.code === 'bad_message') return new HttpError(400, error.message, 'invalid_request_error', 'prompt');
  if (error instanceof EngineRequestError && error.code === 'bad_grammar')
    return new HttpError(400, `grammar: ${error.message}`, 'invalid_request_error', 'grammar');
  if (error instanceof EngineRequestError && error.code === 'generate_failed') return new HttpError(500, `generation failed: ${error.message}`, 'server_error');
  if (error instanceof NoReplicaError) return new HttpError(503, error.message, 'server_error', null, 'no_replica', retryAfter());
  if (error instanceof ReplicaDiedError) return new HttpError(502, error.message, 'server_error', null, 'replica_died');
  return toHttpError(error, (line) => workstation.log.error(line));
}

/**
 * A request's tokens from the tokenizer: input it refuses (a template that fails on these messages) is a
 * 400 naming the field; a tokenizer process that died or hung under the call is a 503; no model a 503.
 */
export async function tokensOf<T>(workstation: Workstation, tokenize: () => Promise<T>, param: string): Promise<T> {
  try {
    return await tokenize();
  } catch (error) {
    if (error instanceof TokenizerUnavailableError)
      throw new HttpError(503, error.message, 'server_error', null, 'tokenizer_unavailable', { 'retry-after': '5' });
    if (error instanceof TokenizerError) throw new HttpError(400, `${param}: ${error.message}`, 'invalid_request_error', param);
    if (error instanceof NoReplicaError) throw mapGenerationError(workstation, error);
    throw error;
  }
}
