/**
 * What a peer says of itself, asked before it is routed to and again at each reconnect: its kind (when
 * the plan says `auto`: llama-server answers `GET /props`; a Manifold node lists its model as owned by
 * "manifold" in `/v1/models`; anything else is an OpenAI-style server), its health, the models it
 * serves with what metadata it exposes, its slots and its per-slot context. A peer that does not answer
 * is a RemoteLostError (the link reconnects); an answer of the wrong shape, or a refusal, is a plain
 * Error naming the URL and what was wrong (the link gives up until it is started again).
 */
import { z } from 'zod';
import { firstIssueInWords, inWords } from '../../common/issue-words.js';
import { getPeerJson, type PeerAddress, type PeerAnswer } from './peer-http.js';
import { peerErrorWords, RemoteLostError } from './remote-errors.js';
import type { RemoteKind } from '../config/remote-plan.js';

const count = z.number().int().nonnegative();

const propsSchema = z.object({
  total_slots: z.number().int().positive(),
  default_generation_settings: z.object({ n_ctx: count.optional() }).optional(),
});

const peerModelSchema = z.object({
  id: z.string().min(1),
  owned_by: z.string().optional(),
  /** llama-server: the GGUF's figures; Manifold: its replicas, context and architecture. */
  meta: z
    .object({
      n_vocab: count.optional(),
      n_params: count.optional(),
      n_ctx_train: count.optional(),
      n_ctx: count.optional(),
      size: count.optional(),
      context: count.optional(),
      architecture: z.string().nullish(),
    })
    .nullish(),
  /** vLLM: the context it serves. */
  max_model_len: count.optional(),
});
export type PeerModel = z.infer<typeof peerModelSchema>;

const modelsSchema = z.object({ data: z.array(peerModelSchema) });

export interface PeerDescription {
  readonly kind: RemoteKind;
  readonly models: readonly PeerModel[];
  /** Slots the peer says it has; null when it does not say. */
  readonly slots: number | null;
  /** The peer's per-slot context; null when it does not say. */
  readonly contextSize: number | null;
  /** The health check's round trip. */
  readonly latencyMs: number;
}

/** The endpoint whose 200 says a peer of this kind is up: `/health`, or `/v1/models` for a server that has none. */
export const healthPath = (kind: RemoteKind): string => (kind === 'openai' ? '/v1/models' : '/health');

/** The answer as `schema` reads it, or an Error naming the URL, the endpoint and the first problem. */
function readAnswer<T>(peer: PeerAddress, path: string, answer: PeerAnswer, schema: z.ZodType<T>): T {
  if (answer.status === 401 || answer.status === 403)
    throw new Error(`${peer.url}: GET ${path} refused the API key (${answer.status}: ${peerErrorWords(answer.body).message}); check the replica's "apiKey"`);
  if (answer.status !== 200) throw new Error(`${peer.url}: GET ${path} answered ${answer.status}: ${peerErrorWords(answer.body).message}`);
  const parsed = schema.safeParse(answer.body, { error: inWords });
  if (!parsed.success) throw new Error(`${peer.url}: GET ${path} answered in a shape it should not: ${firstIssueInWords(parsed.error, 'the answer').message}`);
  return parsed.data;
}

/** Asks the peer what it is, checks it is healthy, and reads its models, slots and context. */
export async function describePeer(peer: PeerAddress, kind: RemoteKind | 'auto', timeoutMs: number, signal?: AbortSignal): Promise<PeerDescription> {
  const get = (path: string): Promise<PeerAnswer> => getPeerJson(peer, path, timeoutMs, signal);
  let props: z.infer<typeof propsSchema> | undefined;
  if (kind === 'auto' || kind === 'llama-server') {
    const answer = await get('/props');
    const parsed = propsSchema.safeParse(answer.body);
    if (answer.status === 200 && parsed.success) props = parsed.data;
    else if (kind === 'llama-server') readAnswer(peer, '/props', answer, propsSchema);
  }
  const modelsAnswer = await get('/v1/models');
  const models = readAnswer(peer, '/v1/models', modelsAnswer, modelsSchema).data;
  const resolved: RemoteKind = kind !== 'auto' ? kind : props ? 'llama-server' : models.some((m) => m.owned_by === 'manifold') ? 'manifold' : 'openai';

  const health = resolved === 'openai' ? modelsAnswer : await get(healthPath(resolved));
  if (health.status !== 200)
    throw new RemoteLostError(peer.url, `is not ready: GET ${healthPath(resolved)} answered ${health.status}: ${peerErrorWords(health.body).message}`);

  const first = models[0];
  switch (resolved) {
    case 'llama-server':
      return {
        kind: resolved,
        models,
        slots: props?.total_slots ?? null,
        contextSize: props?.default_generation_settings?.n_ctx ?? first?.meta?.n_ctx ?? null,
        latencyMs: health.roundTripMs,
      };
    case 'manifold': {
      const slots = readAnswer(peer, '/slots', await get('/slots'), z.array(z.unknown()));
      return { kind: resolved, models, slots: slots.length, contextSize: first?.meta?.context ?? null, latencyMs: health.roundTripMs };
    }
    case 'openai':
      return { kind: resolved, models, slots: null, contextSize: first?.max_model_len ?? null, latencyMs: health.roundTripMs };
  }
}
