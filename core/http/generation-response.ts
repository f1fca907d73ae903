/**
 * The answer to a prepared generation (generation-request.ts), as JSON or as server-sent events. Usage
 * reports the reused prompt tokens as `prompt_tokens_details.cached_tokens`. A client that goes away cancels
 * its generation. Each generation is tracked in the front's open generations until its response ends, so a
 * graceful stop can end it cleanly. A stream sends one event for the tokens that reached the front in one
 * event-loop turn (TurnBatch): one token when they come one by one, several when they came together; its
 * first token goes at once; its headers go once its replica's engine client has the request.
 * `timings.front_ms` is the front's own share of the time to first token (see servedBy).
 */
import type { ServerResponse } from 'node:http';
import type { GeneratedLogprob } from '../../common/engine-protocol.js';
import { mergeTokenChunks, TurnBatch, type TokenChunk } from '../../common/turn-batch.js';
import type { OpenGenerations } from '../open-generations.js';
import type { ReplicaGenerateResult } from '../replicas/request-dispatcher.js';
import type { Workstation } from '../workstation.js';
import { answerMessage, ChatAnswerDeltas, type AnswerDelta } from './chat-answer.js';
import { mapGenerationError, type Generation } from './generation-request.js';
import { errorBody, HttpError, sendError, sendJson } from './http-error.js';
import { chatLogprobs, completionLogprobs } from './logprobs.js';

/** What answering needs besides the generation: the workstation that runs it, the front's open generations, the response. */
export interface Responder {
  workstation: Workstation;
  open: OpenGenerations<HttpError>;
  res: ServerResponse;
}

/** Runs the generation and answers it, as a stream when the request asked for one. */
export function respond(generation: Generation, to: Responder): Promise<void> {
  return generation.body.stream ? respondStream(generation, to) : respondJson(generation, to);
}

/** The `logprobs` of a choice or chunk for these tokens (null when not asked); `offset`: where their text starts in the completion. */
function logprobsOf({ kind, logprobs }: Generation, entries: readonly GeneratedLogprob[] | undefined, offset: number) {
  return logprobs === undefined ? null : kind === 'chat' ? chatLogprobs(entries ?? [], logprobs) : completionLogprobs(entries ?? [], logprobs, offset);
}

/** An AbortController that aborts when the client goes away before its response ended. */
function abortOnClose(res: ServerResponse): AbortController {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort;
}

/** The whole answer in one JSON body. */
async function respondJson(generation: Generation, { workstation, open, res }: Responder): Promise<void> {
  const { request, plan, keep, body, id, created, model, arrivedAt, kind } = generation;
  const tools = plan?.tools ?? null;
  const object = kind === 'chat' ? 'chat.completion' : 'text_completion';
  const abort = abortOnClose(res);
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
  const choice = answer
    ? { index: 0, ...answer, logprobs: logprobsOf(generation, collected, 0) }
    : { index: 0, text: result.text, finish_reason: finishReason(result), logprobs: logprobsOf(generation, collected, 0) };
  if (answer) await keep?.({ message: answer.message, finishReason: answer.finish_reason, result });
  sendJson(res, 200, {
    id,
    object,
    created,
    model,
    choices: [choice],
    usage: usage(result),
    manifold: servedBy(result, body.return_tokens === true, frontMs(result, arrivedAt, firstTokenAt)),
  });
}

/** The answer as server-sent events: each turn's tokens as one event, then the finish, usage when asked, and `[DONE]`. */
async function respondStream(generation: Generation, { workstation, open, res }: Responder): Promise<void> {
  const { request, plan, keep, body, id, created, model, arrivedAt, kind, logprobs } = generation;
  const abort = abortOnClose(res);
  const chunkObject = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const send = (payload: unknown): void => {
    if (!res.writableEnded) res.write(`data: ${JSON.stringify(payload)}\n\n`);
  };
  const end = (): void => {
    if (!res.writableEnded) res.end('data: [DONE]\n\n');
  };
  let streamedText = 0;
  const chunk = (delta: string | AnswerDelta | null, finish: string | null, extra: Record<string, unknown> = {}, entries?: GeneratedLogprob[]) => {
    const choiceLogprobs = entries === undefined ? null : logprobsOf(generation, entries, streamedText);
    streamedText += typeof delta === 'string' ? delta.length : 0;
    return {
      id,
      object: chunkObject,
      created,
      model,
      choices:
        kind === 'chat'
          ? [
              {
                index: 0,
                delta: delta === null ? {} : typeof delta === 'string' ? { content: delta } : delta,
                finish_reason: finish,
                ...(choiceLogprobs ? { logprobs: choiceLogprobs } : {}),
              },
            ]
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
