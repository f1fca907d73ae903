/**
 * Embeddings for a replica set in which no replica serves them (every replica a llama-server child or a
 * remote peer): one node-llama-cpp engine child of the same model on the CPU, started at the first
 * embeddings request, started again at the next one if it dies, and stopped with the replica set. Its
 * weights are the model file mapped once more, so the page cache holds them once (on a CPU machine
 * they take no more memory). Not llama-server's `--embeddings` in the replicas: at the bundled llama.cpp
 * such a server still completes, but refuses `/v1/embeddings` for a generative model ("Pooling type 'none'
 * is not OAI compatible") unless `--pooling` is set for every request it serves; the embedding engine
 * leaves the replicas as they are and gives the vectors a node-llama-cpp replica gives.
 */
import type { SpawnEngine } from '../engine/engine-process.js';
import type { LogSink } from '../logging/core-log.js';
import { embeddingDriver } from '../engine-kinds/engine-kinds.js';
import type { ReplicaDriver } from '../kind/replica-driver.js';
import { NoReplicaError } from './replica-errors.js';

export interface EmbeddingEngineOptions {
  spawn: SpawnEngine;
  modelPath: string;
  /** Tokens an input may hold (a replica's slot). */
  contextSize: number;
  log: LogSink;
}

export class EmbeddingEngine {
  private starting: Promise<ReplicaDriver> | undefined;
  private closed = false;

  constructor(private readonly options: EmbeddingEngineOptions) {}

  /** One vector per input, from the embedding engine (started first when it is not running). */
  async embed(inputs: readonly (readonly number[])[]): Promise<number[][]> {
    if (this.closed) throw new NoReplicaError('the model is being unloaded');
    const supervisor = await (this.starting ??= this.start());
    const client = supervisor.client;
    if (!client?.embed) throw new NoReplicaError('the embedding engine is not running; the next request starts it again');
    return client.embed(inputs);
  }

  private async start(): Promise<ReplicaDriver> {
    const { spawn, modelPath, contextSize, log } = this.options;
    const supervisor = embeddingDriver({ spawn, modelPath, log }, contextSize);
    supervisor.on('exit', () => {
      if (this.starting && !this.closed) log('[embeddings] the embedding engine stopped; the next embeddings request starts it again', 'warn');
      this.starting = undefined;
    });
    try {
      await supervisor.start();
      log('[embeddings] serving embeddings from a node-llama-cpp engine on the CPU (no replica serves them)', 'info');
      return supervisor;
    } catch (error) {
      this.starting = undefined;
      throw new NoReplicaError(`the embedding engine did not start: ${(error as Error).message}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const supervisor = await this.starting?.catch(() => undefined);
    this.starting = undefined;
    await supervisor?.stop();
  }
}
