/**
 * `/v1/chat/completions`, `/v1/completions` and `/v1/models`: OpenAI-shaped requests mapped onto the
 * workstation (chat template in the tokenizer process, routing, sampling, stop, max tokens, seed) and
 * answered as JSON or as server-sent events. Usage reports the reused prompt tokens as
 * `prompt_tokens_details.cached_tokens`. A client that goes away cancels its generation. Each generation
 * is tracked in the front's open generations until its response ends, so a graceful stop can end it cleanly.
 * A stream sends one event for the tokens that reached the front in one event-loop turn (TurnBatch): one
 * token when they come one by one, several when they came together; its first token goes at once.
 * `timings.front_ms` is the front's own share of the time to first token (see servedBy). A chat completion
 * with `store: true` is kept as a chat-window conversation once its answer is complete, before its
 * response ends (stored-completion.ts). A stream's headers go once its replica's engine client has the
 * request.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { MAX_GENERATE_TOKENS, type GeneratedLogprob, type GenerateRequest, type GenerateRequestInput } from '../../common/engine-protocol.js';
import { mergeTokenChunks, TurnBatch, type TokenChunk } from '../../common/turn-batch.js';
import { EngineRequestError } from '../engine/engine-client.js';
import { QueueFullError, QueueTimeoutError, RequestCancelledError } from '../queue/queue-errors.js';
import { NoReplicaError, ReplicaDiedError } from '../replicas/replica-errors.js';
import type { ReplicaGenerateResult } from '../replicas/request-dispatcher.js';
import { TokenizerError, TokenizerUnavailableError } from '../tokenizer.js';
import type { Workstation } from '../workstation.js';
import { errorBody, HttpError, parseRequest, sendError, sendJson, toHttpError } from './http-error.js';
import { chatCompletionRequestSchema, completionRequestSchema, type ChatCompletionRequest, type SamplingRequest } from './openai-schemas.js';
import { checkIgnoreEos, requestGrammar } from './response-format.js';
import { chatLogprobs, completionLogprobs, requestedLogprobs } from './logprobs.js';
import type { OpenGenerations } from '../open-generations.js';
import { namesOf, notServed, selectsModel, type ServedModel } from './model-names.js';
import { chatPrompt, thinkingBudgetOf, type ToolPlan } from './tool-calls-request.js';
import { answerMessage, ChatAnswerDeltas, reasoningPlan, type AnswerDelta, type ReasoningPlan } from './chat-answer.js';
import { storeCompletion, type CompletedAnswer } from './stored-completion.js';

type Kind = 'chat' | 'text';

const servedModel = (workstation: Workstation): ServedModel => ({ id: workstation.modelId, path: workstation.modelPath, aliases: workstation.modelAliases });

/** A 404 unless `model` names the loaded model (model-names.ts); with no model loaded, the request's 503 says so. */
export function checkModel(workstation: Workstation, model: string | undefined): void {
  const served = servedModel(workstation);
  if (model !== undefined && served.id && !selectsModel(served, model)) {
    throw new HttpError(404, notServed(served, model), 'invalid_request_error', 'model', 'model_not_found');
  }
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
  }: { grammar?: string | undefined; logprobs?: number | undefined; preservedTokens?: readonly string[]; thinkingBudget?: GenerateRequest['thinkingBudget'] } = {},
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

function usage(result: ReplicaGenerateResult) {
  return {
    prompt_tokens: result.usage.promptTokens,
    completion_tokens: result.usage.completionTokens,
    total_tokens: result.usage.promptTokens + result.usage.completionTokens,
    prompt_tokens_details: { cached_tokens: result.reusedTokens },
  };
}

const finishReason = (result: ReplicaGenerateResult): 'stop' | 'length' => (result.finishReason === 'length' ? 'length' : 'stop');

/**
 * The front's own share of the time to first token: from the request arriving to its first token leaving
 * (reaching the front, for an answer sent whole), less the time it waited for a slot (in the front's queue
 * and the engine's) and the engine's own time from the slot to the first token. Null when no token came.
 */
export function frontMs(result: ReplicaGenerateResult, arrivedAt: number, firstTokenAt: number | undefined): number | null {
  return firstTokenAt === undefined ? null : firstTokenAt - arrivedAt - result.timings.queuedMs - result.timings.prefillMs;
}

/** Where and how fast the answer was served, as an extension field (llama-server's `timings` names, and `front_ms`). */
const servedBy = (result: ReplicaGenerateResult, withTokens: boolean, front: number | null) => ({
  ...(withTokens ? { tokens: result.completionTokens } : {}),
  replica: result.replica,
  slot: result.globalSlot,
  failed_over: result.failedOver,
  timings: {
    queued_ms: result.timings.queuedMs,
    cache_n: result.reusedTokens,
    prompt_n: result.timings.prefillTokens,
    prompt_ms: result.timings.prefillMs,
    predicted_n: result.usage.completionTokens,
    predicted_ms: result.timings.decodeMs,
    predicted_per_second: result.timings.decodeTokensPerSecond,
    front_ms: front,
  },
});

function mapGenerationError(workstation: Workstation, error: unknown): HttpError {
  const retryAfter = (): Record<string, string> => ({ 'retry-after': String(workstation.replicas.retryAfterSeconds()) });
  if (error instanceof QueueFullError) return new HttpError(429, error.message, 'rate_limit_error', null, 'rate_limit_exceeded', retryAfter());
  if (error instanceof QueueTimeoutError) return new HttpError(503, error.message, 'server_error', null, 'queue_timeout', retryAfter());
  if (error instanceof RequestCancelledError) return new HttpError(499, error.message, 'invalid_request_error', null, 'cancelled');
  if (error instanceof EngineRequestError && error.code === 'prompt_too_long') return new HttpError(400, error.message, 'invalid_request_error', 'messages', 'context_length_exceeded');
  if (error instanceof EngineRequestError && error.code === 'bad_message') return new HttpError(400, error.message, 'invalid_request_error', 'prompt');
  if (error instanceof EngineRequestError && error.code === 'bad_grammar') return new HttpError(400, `grammar: ${error.message}`, 'invalid_request_error', 'grammar');
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
    if (error instanceof TokenizerUnavailableError) throw new HttpError(503, error.message, 'server_error', null, 'tokenizer_unavailable', { 'retry-after': '5' });
    if (error instanceof TokenizerError) throw new HttpError(400, `${param}: ${error.message}`, 'invalid_request_error', param);
    if (error instanceof NoReplicaError) throw mapGenerationError(workstation, error);
    throw error;
  }
}

async function serveGeneration(
  workstation: Workstation,
  open: OpenGenerations<HttpError>,
  kind: Kind,
  body: SamplingRequest,
  tokens: number[],
  maxTokens: number | null | undefined,
  res: ServerResponse,
  arrivedAt: number,
  /** How a chat answer is read: its tool calls (tool-calls-request.ts) and its reasoning (chat-answer.ts); null for a text completion. */
  plan: { tools: ToolPlan | null; reasoning: ReasoningPlan | null } | null = null,
  /** Called with a chat answer once it is complete, before the response ends (`store: true`); null to keep nothing. */
  keep: ((answer: CompletedAnswer) => Promise<void>) | null = null,
): Promise<void> {
  const grammar = await requestGrammar(body, (schema) => tokensOf(workstation, () => workstation.tokenizer.jsonSchemaGrammar(schema), 'response_format'));
  const logprobs = requestedLogprobs(body);
  /** The `logprobs` of a choice or chunk for these tokens (null when not asked); `offset`: where their text starts in the completion. */
  const logprobsOf = (entries: readonly GeneratedLogprob[] | undefined, offset: number) =>
    logprobs === undefined ? null : kind === 'chat' ? chatLogprobs(entries ?? [], logprobs) : completionLogprobs(entries ?? [], logprobs, offset);
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const object = kind === 'chat' ? 'chat.completion' : 'text_completion';
  const model = workstation.modelId;
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  // A forced tool call is generated under its grammar (routed, like any grammar, only to replicas that take one);
  // it never comes with response_format or grammar (tool-calls-schemas.ts refuses that).
  const tools = plan?.tools ?? null;
  const finalGrammar = tools?.grammar ?? grammar;
  checkIgnoreEos(body, finalGrammar);
  const preservedTokens = plan?.reasoning || plan?.tools ? workstation.tokenizer.preservedTokens : [];
  const thinkingBudget = plan?.reasoning && kind === 'chat' ? budgetOf(body as ChatCompletionRequest, plan.reasoning) : undefined;
  const request = generateRequest(body, tokens, maxTokens, { grammar: finalGrammar, logprobs, preservedTokens, thinkingBudget });
  const vocabulary = workstation.vocabularySize;
  const outside = vocabulary > 0 ? body.logit_bias?.find(([token]) => token >= vocabulary) : undefined;
  if (outside) throw new HttpError(400, `logit_bias: token id ${outside[0]} is outside the model's vocabulary of ${vocabulary} tokens`, 'invalid_request_error', 'logit_bias');
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

  if (!body.stream) {
    const untrack = open.add({
      cut: (failure) => {
        sendError(res, failure);
        abort.abort();
      },
    });
    let result: ReplicaGenerateResult;
    let firstTokenAt: number | undefined;
    const collected: GeneratedLogprob[] = [];
    try {
      result = await workstation.generate(request, {
        signal: abort.signal,
        onTokens: (chunk) => {
          firstTokenAt ??= performance.now();
          if (chunk.logprobs) collected.push(...chunk.logprobs);
        },
      });
    } catch (error) {
      throw mapGenerationError(workstation, error);
    } finally {
      untrack();
    }
    if (res.headersSent) return;
    const answer = plan ? answerMessage(tools, plan.reasoning, result.text, finishReason(result)) : null;
    const choice = answer ? { index: 0, ...answer, logprobs: logprobsOf(collected, 0) } : { index: 0, text: result.text, finish_reason: finishReason(result), logprobs: logprobsOf(collected, 0) };
    if (answer) await keep?.({ message: answer.message, finishReason: answer.finish_reason, result });
    sendJson(res, 200, { id, object, created, model, choices: [choice], usage: usage(result), manifold: servedBy(result, body.return_tokens === true, frontMs(result, arrivedAt, firstTokenAt)) });
    return;
  }

  const chunkObject = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const send = (payload: unknown): void => {
    if (!res.writableEnded) res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  const end = (): void => {
    if (!res.writableEnded) res.end('data: [DONE]\n\n');
  };
  let streamedText = 0;
  const chunk = (delta: string | AnswerDelta | null, finish: string | null, extra: Record<string, unknown> = {}, entries?: GeneratedLogprob[]) => {
    const choiceLogprobs = entries === undefined ? null : logprobsOf(entries, streamedText);
    streamedText += typeof delta === 'string' ? delta.length : 0;
    return {
      id,
      object: chunkObject,
      created,
      model,
      choices:
        kind === 'chat'
          ? [{ index: 0, delta: delta === null ? {} : typeof delta === 'string' ? { content: delta } : delta, finish_reason: finish, ...(choiceLogprobs ? { logprobs: choiceLogprobs } : {}) }]
          : [{ index: 0, text: typeof delta === 'string' ? delta : '', finish_reason: finish, logprobs: choiceLogprobs }],
      ...extra,
    };
  };
  // A chat answer goes through its reader: reasoning and content as they come, each call once it is whole.
  const answerDeltas = plan && (plan.tools || plan.reasoning) ? new ChatAnswerDeltas(plan.tools, plan.reasoning) : null;
  const sendDeltas = (deltas: AnswerDelta[], extra: Record<string, unknown>, entries?: GeneratedLogprob[]): void => {
    if (deltas.length === 0 && (Object.keys(extra).length > 0 || entries !== undefined)) send(chunk(null, null, extra, entries));
    deltas.forEach((delta, i) => send(chunk(delta, null, i === 0 ? extra : {}, i === 0 ? entries : undefined)));
  };
  // With `return_tokens`, each event carries its token ids too (a Manifold node fronted as a remote replica reads them).
  let firstTokenAt: number | undefined;
  const tokenEvents = new TurnBatch<TokenChunk<GeneratedLogprob>>((chunks) => {
    const { text, tokens, logprobs: entries } = mergeTokenChunks(chunks);
    firstTokenAt ??= performance.now();
    const extra = body.return_tokens === true ? { manifold: { tokens } } : {};
    const chunkLogprobs = logprobs === undefined ? undefined : (entries ?? []);
    if (answerDeltas) sendDeltas(answerDeltas.push(text), extra, chunkLogprobs);
    else send(chunk(text, null, extra, chunkLogprobs));
  }, setImmediate);
  // Before the stream opened, a failure is still a status code (429 and 503 with Retry-After).
  const fail = (failure: HttpError): void => {
    if (!res.headersSent) return sendError(res, failure);
    tokenEvents.flush();
    send(errorBody(failure));
    end();
  };
  // The stream opens when the request has left the queue and its replica's engine client has it: until
  // then a refusal (429, 503) is still an HTTP status with Retry-After, which clients retry on.
  const openStream = (): void => {
    if (res.headersSent) return;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    // Sent now, not with the first token: a client (a Manifold fronting this one) sees its request taken at once.
    res.flushHeaders();
    if (kind === 'chat') send({ id, object: chunkObject, created, model, choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] });
  };
  const untrack = open.add({
    cut: (failure) => {
      fail(failure);
      abort.abort();
    },
  });
  try {
    const result = await workstation.generate(request, {
      signal: abort.signal,
      onDispatched: openStream,
      // Tokens go out even when their text is still held (a split UTF-8 character, a possible stop string),
      // so a client sees the first token when it is made.
      onTokens: ({ text, tokens, logprobs: entries }) => {
        if (text || tokens.length) tokenEvents.push({ tokens, text, ...(entries ? { logprobs: entries } : {}) }, firstTokenAt === undefined ? 'now' : 'turn');
      },
    });
    tokenEvents.flush();
    if (answerDeltas) sendDeltas(answerDeltas.end(), {});
    const finish = answerDeltas ? answerDeltas.finishReason(finishReason(result)) : finishReason(result);
    await keep?.({ message: answerDeltas ? answerDeltas.message() : { content: result.text }, finishReason: finish, result });
    send(chunk(null, finish, { manifold: servedBy(result, body.return_tokens === true, frontMs(result, arrivedAt, firstTokenAt)) }));
    if (body.stream_options?.include_usage) send({ id, object: chunkObject, created, model, choices: [], usage: usage(result) });
    end();
  } catch (error) {
    fail(mapGenerationError(workstation, error));
  } finally {
    untrack();
  }
}

/** The engine's thinking budget for a request that sets one (≥ 0) to a model whose thinking has an end tag. */
function budgetOf(body: ChatCompletionRequest, reasoning: ReasoningPlan): GenerateRequest['thinkingBudget'] {
  const tokens = thinkingBudgetOf(body);
  return tokens >= 0 && reasoning.tags.end ? { tokens, start: reasoning.tags.start, end: reasoning.tags.end, open: reasoning.open } : undefined;
}

/** `arrivedAt`: when the request reached the front (performance.now()), for `timings.front_ms`. */
export async function handleChatCompletions(workstation: Workstation, open: OpenGenerations<HttpError>, raw: unknown, res: ServerResponse, arrivedAt: number): Promise<void> {
  const body = parseRequest(chatCompletionRequestSchema, raw);
  checkModel(workstation, body.model);
  const { tokens, tools, thinkingOpen } = await tokensOf(workstation, () => chatPrompt(workstation.tokenizer, body), 'messages');
  // An answer held by a grammar Manifold made (a forced call, response_format) is that grammar's from its first token: no thinking to read.
  const reasoning = tools?.grammar || (body.response_format && body.response_format.type !== 'text') ? null : reasoningPlan(body, workstation.tokenizer.thinking, thinkingOpen);
  // A store that fails is logged: the answer the client waits for is still sent.
  const keep = body.store
    ? (answer: CompletedAnswer) =>
        storeCompletion(workstation.chat.store, body, answer).catch(
          (error: Error) => workstation.log.warn(`store: the completion was not stored as a conversation (${error.message})`),
        )
    : null;
  await serveGeneration(workstation, open, 'chat', body, tokens, body.max_completion_tokens ?? body.max_tokens, res, arrivedAt, { tools, reasoning }, keep);
}

export async function handleCompletions(workstation: Workstation, open: OpenGenerations<HttpError>, raw: unknown, res: ServerResponse, arrivedAt: number): Promise<void> {
  const body = parseRequest(completionRequestSchema, raw);
  checkModel(workstation, body.model);
  const prompt = body.prompt;
  const tokens =
    typeof prompt === 'string' || typeof prompt[0] === 'string'
      ? await tokensOf(workstation, () => workstation.tokenizer.tokenizePrompt(typeof prompt === 'string' ? prompt : (prompt[0] as string)), 'prompt')
      : (prompt as number[]);
  if (tokens.length === 0) throw new HttpError(400, 'prompt: the prompt is empty', 'invalid_request_error', 'prompt');
  await serveGeneration(workstation, open, 'text', body, tokens, body.max_tokens, res, arrivedAt);
}

/** OpenAI's model object for the loaded model, with its other names (`aliases`) and Manifold's `meta`. */
function modelObject(workstation: Workstation) {
  const info = workstation.replicas.info();
  const served = servedModel(workstation);
  return {
    id: served.id,
    object: 'model',
    created: 0,
    owned_by: 'manifold',
    aliases: namesOf(served).slice(1),
    meta: { replicas: info.replicas, replicas_alive: info.replicas_alive, context: workstation.replicas.maxContext, architecture: info.model?.architecture ?? null },
  };
}

/** `GET /v1/models`: the loaded model; an empty list when none is loaded (`--idle`). */
export function handleModels(workstation: Workstation, res: ServerResponse): void {
  sendJson(res, 200, { object: 'list', data: workstation.modelId ? [modelObject(workstation)] : [] });
}

/** `GET /v1/models/{name}`: the loaded model's object when `name` is one of its names, else a 404 naming them. */
export function handleModel(workstation: Workstation, name: string, res: ServerResponse): void {
  const served = servedModel(workstation);
  if (!selectsModel(served, name)) throw new HttpError(404, notServed(served, name), 'invalid_request_error', 'model', 'model_not_found');
  sendJson(res, 200, modelObject(workstation));
}
