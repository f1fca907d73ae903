/**
 * Where an embedding request goes: the least loaded ready replica that serves embeddings (the fewest
 * running requests per slot, then the fewest embeddings running). Not queued, since embeddings take no
 * slot; a replica that dies under it hands the request to the next one.
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
      if (tried.size > 0) throw new NoReplicaError(`replicas ${[...tried].join(', ')} died before answering and no other replica serves embeddings`);
      throw new EmbeddingsUnsupportedError('no replica serves embeddings: only node-llama-cpp engines do (llama-server children run without --embeddings, and remote peers are not asked)');
    }
    tried.add(replica.index);
    replica.embedding++;
    try {
      return await replica.driver.client!.embed!(inputs);
    } catch (error) {
      if (!(error instanceof EngineExitedError)) throw error;
      log(`[replica ${replica.index}] died under an embedding request; it goes to another replica`, 'warn');
    } finally {
      replica.embedding--;
    }
  }
}
