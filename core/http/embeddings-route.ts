/**
 * `POST /v1/embeddings`: strings are tokenized in core's tokenizer process (BOS when the model wants
 * one), token-id inputs are checked against the vocabulary, and the replica set sends them to the least
 * loaded replica that serves embeddings (a node-llama-cpp engine's embedding context). The vectors come
 * back as OpenAI gives them: floats, or base64 of little-endian float32.
 */
import type { ServerResponse } from 'node:http';
import { EngineRequestError } from '../engine/engine-client.js';
import { EmbeddingsUnsupportedError, NoReplicaError } from '../replicas/replica-errors.js';
import type { Workstation } from '../workstation.js';
import { HttpError, parseRequest, sendJson } from './http-error.js';
import { tokensOf } from './generation-request.js';
import { checkModel } from './openai-routes.js';
import { embeddingRequestSchema, type EmbeddingRequest } from './openai-schemas.js';

/** The request's inputs as lists of token ids. */
async function inputTokens(workstation: Workstation, input: EmbeddingRequest['input']): Promise<number[][]> {
  if (typeof input === 'string') input = [input];
  if (input.every((item) => typeof item === 'number')) return [input as number[]];
  if (input.every((item) => Array.isArray(item))) return input as number[][];
  const texts = input as string[];
  return tokensOf(workstation, () => Promise.all(texts.map((text) => workstation.tokenizer.tokenizePrompt(text))), 'input');
}

/** A float vector as OpenAI's base64: its little-endian float32 bytes. */
export function base64Vector(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

function mapEmbeddingError(error: unknown): unknown {
  if (error instanceof EmbeddingsUnsupportedError) return new HttpError(501, error.message, 'not_supported_error', null, 'embeddings_unsupported');
  if (error instanceof NoReplicaError) return new HttpError(503, error.message, 'server_error', null, 'no_replica', { 'retry-after': '5' });
  if (error instanceof EngineRequestError && error.code === 'prompt_too_long')
    return new HttpError(400, `input: ${error.message}`, 'invalid_request_error', 'input', 'context_length_exceeded');
  if (error instanceof EngineRequestError && error.code === 'bad_message')
    return new HttpError(400, `input: ${error.message}`, 'invalid_request_error', 'input');
  if (error instanceof EngineRequestError) return new HttpError(500, error.message, 'server_error');
  return error;
}

export async function handleEmbeddings(workstation: Workstation, raw: unknown, res: ServerResponse): Promise<void> {
  const body = parseRequest(embeddingRequestSchema, raw);
  checkModel(workstation, body.model);
  const inputs = await inputTokens(workstation, body.input);
  const vocabulary = workstation.vocabularySize;
  for (const [i, input] of inputs.entries()) {
    const outside = vocabulary > 0 ? input.find((token) => token >= vocabulary) : undefined;
    if (outside !== undefined)
      throw new HttpError(400, `input[${i}]: token id ${outside} is outside the model's vocabulary of ${vocabulary} tokens`, 'invalid_request_error', 'input');
  }
  const vectors = await workstation.replicas.embed(inputs).catch((error: unknown) => {
    throw mapEmbeddingError(error);
  });
  const promptTokens = inputs.reduce((sum, input) => sum + input.length, 0);
  sendJson(res, 200, {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: body.encoding_format === 'base64' ? base64Vector(vector) : vector })),
    model: workstation.modelId,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}
