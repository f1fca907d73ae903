/**
 * Where an embedding request goes: the least loaded ready replica that serves embeddings (a node-llama-cpp
 * engine, or a Manifold or OpenAI peer: the fewest running requests per slot, then the fewest embeddings
 * running). Not queued, since embeddings take no slot; a replica that dies under it, or a peer that turns
 * out not to serve them, hands the request to the next one.
 */
import { EngineExitedError } from '../engine/engine-client.js';
import type { LogSink } from '../logging/core-log.js';
import type { Replica } from './replica.js';
import { EmbeddingsUnsupportedError, NoReplicaError } from './replica-errors.js';

/** One embedding vector per input, from the least loaded replica that serves embeddings. */
export async function embedOnLeastLoaded(replicas: readonly Replica[], inputs: readonly (readonly number[])[], log: LogSink): Promise<number[][]> {
  const tried = new Set<number>();
  for (;;) {
    const ready = replicas.filter((r) => r.routable);
    if (ready.length === 0) throw new NoReplicaError('no replica is alive to serve the request');
    const load = (r: Replica): [number, number] => [r.running / r.slots, r.embedding];
    const candidates = ready.filter((r) => r.driver.client?.embed && !tried.has(r.index)).sort((a, b) => load(a)[0] - load(b)[0] || load(a)[1] - load(b)[1]);
    const replica = candidates[0];
    if (!replica) {
      if (tried.size > 0) throw new NoReplicaError(`replicas ${[...tried].join(', ')} could not answer and no other replica serves embeddings`);
      throw new EmbeddingsUnsupportedError(
        'no replica serves embeddings: node-llama-cpp engines and Manifold or OpenAI peers do (llama-server runs without --embeddings)',
      );
    }
    tried.add(replica.index);
    replica.embedding++;
    try {
      return await replica.driver.client!.embed!(inputs);
    } catch (error) {
      if (!(error instanceof EngineExitedError)) throw error;
      log(`[replica ${replica.index}] could not answer an embedding request (${error.message}); it goes to another replica`, 'warn');
    } finally {
      replica.embedding--;
    }
  }
}
