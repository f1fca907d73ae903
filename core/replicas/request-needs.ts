/**
 * What a generation needs of the replica that serves it beyond tokens in, tokens out: a grammar
 * (structured output) is taken by node-llama-cpp engines, llama-server and Manifold peers, not by a
 * peer that speaks only the OpenAI dialect; token logprobs come from node-llama-cpp engines and llama-server. The dispatcher binds such a request
 * only to a replica that
 * takes it, and refuses it (503) when no living replica could; among those, routing is unchanged (by prefix).
 */
import type { GenerateRequestInput } from '../../common/engine-protocol.js';
import type { ReplicaClient } from '../kind/replica-driver.js';

export type Need = 'grammar' | 'logprobs';

/** The client's flag for each need. */
const FLAG_OF = { grammar: 'takesGrammar', logprobs: 'takesLogprobs' } as const satisfies Record<Need, keyof ReplicaClient>;

/** The needs of `request`; empty for a plain generation. */
export function needsOf(request: GenerateRequestInput): Need[] {
  return [...(request.grammar !== undefined ? (['grammar'] as const) : []), ...(request.logprobs !== undefined ? (['logprobs'] as const) : [])];
}

/** Whether `client` serves a request with these needs. */
export const takes = (client: ReplicaClient, needs: readonly Need[]): boolean => needs.every((need) => client[FLAG_OF[need]]);

/** The refusal when no living replica takes `needs`, in words a client can act on. */
export const noReplicaTakes = (needs: readonly Need[]): string =>
  `no replica can serve this request: it needs ${needs.map((need) => WORDS[need]).join(' and ')}, and no living replica gives that`;

const WORDS: Record<Need, string> = {
  grammar:
    'a grammar (structured output), which node-llama-cpp engines, llama-server and Manifold peers take and a remote peer speaking only the OpenAI dialect does not',
  logprobs: 'token logprobs, which node-llama-cpp engines and llama-server give and Manifold and OpenAI-dialect peers are not asked for',
};
