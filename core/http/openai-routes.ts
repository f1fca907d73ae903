/**
 * `/v1/chat/completions`, `/v1/completions` and `/v1/models`: each body parsed and checked against the
 * loaded model, its prompt tokenized (a chat's through its template in the tokenizer process), then
 * prepared (generation-request.ts) and answered as JSON or server-sent events (generation-response.ts).
 * A chat completion with `store: true` is kept as a chat-window conversation once its answer is complete,
 * before its response ends (stored-completion.ts).
 */
import type { ServerResponse } from 'node:http';
import type { OpenGenerations } from '../open-generations.js';
import type { Workstation } from '../workstation.js';
import { reasoningPlan } from './chat-answer.js';
import { prepareGeneration, tokensOf } from './generation-request.js';
import { respond } from './generation-response.js';
import { HttpError, parseRequest, sendJson } from './http-error.js';
import { namesOf, notServed, selectsModel, type ServedModel } from './model-names.js';
import { chatCompletionRequestSchema, completionRequestSchema } from './openai-schemas.js';
import { storeCompletion, type CompletedAnswer } from './stored-completion.js';
import { chatPrompt } from './tool-calls-request.js';

const servedModel = (workstation: Workstation): ServedModel => ({ id: workstation.modelId, path: workstation.modelPath, aliases: workstation.modelAliases });

/** A 404 unless `model` names the loaded model (model-names.ts); with no model loaded, the request's 503 says so. */
export function checkModel(workstation: Workstation, model: string | undefined): void {
  const served = servedModel(workstation);
  if (model !== undefined && served.id && !selectsModel(served, model)) {
    throw new HttpError(404, notServed(served, model), 'invalid_request_error', 'model', 'model_not_found');
  }
}

/** `arrivedAt`: when the request reached the front (performance.now()), for `timings.front_ms`. */
export async function handleChatCompletions(
  workstation: Workstation,
  open: OpenGenerations<HttpError>,
  raw: unknown,
  res: ServerResponse,
  arrivedAt: number,
): Promise<void> {
  const body = parseRequest(chatCompletionRequestSchema, raw);
  checkModel(workstation, body.model);
  const { tokens, tools, thinkingOpen } = await tokensOf(workstation, () => chatPrompt(workstation.tokenizer, body), 'messages');
  // An answer held by a grammar Manifold made (a forced call, response_format) is that grammar's from its first token: no thinking to read.
  const reasoning =
    tools?.grammar || (body.response_format && body.response_format.type !== 'text') ? null : reasoningPlan(body, workstation.tokenizer.thinking, thinkingOpen);
  // A store that fails is logged: the answer the client waits for is still sent.
  const keep = body.store
    ? (answer: CompletedAnswer) =>
        storeCompletion(workstation.chat.store, body, answer).catch((error: Error) =>
          workstation.log.warn(`store: the completion was not stored as a conversation (${error.message})`),
        )
    : null;
  const generation = await prepareGeneration(workstation, {
    kind: 'chat',
    body,
    tokens,
    maxTokens: body.max_completion_tokens ?? body.max_tokens,
    arrivedAt,
    plan: { tools, reasoning },
    keep,
  });
  await respond(generation, { workstation, open, res });
}

export async function handleCompletions(
  workstation: Workstation,
  open: OpenGenerations<HttpError>,
  raw: unknown,
  res: ServerResponse,
  arrivedAt: number,
): Promise<void> {
  const body = parseRequest(completionRequestSchema, raw);
  checkModel(workstation, body.model);
  const prompt = body.prompt;
  const tokens =
    typeof prompt === 'string' || typeof prompt[0] === 'string'
      ? await tokensOf(workstation, () => workstation.tokenizer.tokenizePrompt(typeof prompt === 'string' ? prompt : (prompt[0] as string)), 'prompt')
      : (prompt as number[]);
  if (tokens.length === 0) throw new HttpError(400, 'prompt: the prompt is empty', 'invalid_request_error', 'prompt');
  const generation = await prepareGeneration(workstation, { kind: 'text', body, tokens, maxTokens: body.max_tokens, arrivedAt });
  await respond(generation, { workstation, open, res });
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
    meta: {
      replicas: info.replicas,
      replicas_alive: info.replicas_alive,
      context: workstation.replicas.maxContext,
      architecture: info.model?.architecture ?? null,
    },
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
