/**
 * The engine's embeddings: one node-llama-cpp embedding context (model.createEmbeddingContext), created at
 * the first `embed` request with a slot's context size and the generation context's threads, and made anew when the
 * model it was made for is gone (a weights rebuild). Inputs are token ids, embedded one after another;
 * each vector is the model's pooled embedding (for a model without pooling, the last token's). It is
 * freed before a rebuild and at dispose, after the request running on it.
 */
import type { LlamaEmbeddingContext, LlamaModel, Token } from 'node-llama-cpp';
import { EngineError } from './engine-error.js';
import type { LoadedModel } from './model-context.js';

export class Embedder {
  private context: { model: LlamaModel; embedding: Promise<LlamaEmbeddingContext> } | undefined;
  /** The request running on the context (embeds are serialized: the context has one sequence). */
  private running: Promise<unknown> = Promise.resolve();

  /** One vector per input, in order. */
  embed(loaded: LoadedModel, inputs: readonly (readonly number[])[]): Promise<number[][]> {
    const { options, vocabularySize } = loaded;
    const outside = inputs.flat().find((t) => t >= vocabularySize);
    if (outside !== undefined)
      return Promise.reject(new EngineError('bad_message', `token id ${outside} is outside the model's vocabulary of ${vocabularySize} tokens`));
    const tooLong = inputs.findIndex((input) => input.length >= options.contextSize);
    if (tooLong >= 0) {
      return Promise.reject(
        new EngineError(
          'prompt_too_long',
          `input ${tooLong} is ${inputs[tooLong]!.length} tokens; an embedding holds fewer than ${options.contextSize} (a slot's context)`,
        ),
      );
    }
    const result = this.running.then(async () => {
      const context = await this.contextFor(loaded);
      const vectors: number[][] = [];
      // A copy each: node-llama-cpp adds the model's BOS/EOS to the array it is given.
      for (const input of inputs) vectors.push([...(await context.getEmbeddingFor([...input] as Token[])).vector]);
      return vectors;
    });
    this.running = result.catch(() => {});
    return result.catch((error: unknown) => {
      if (error instanceof EngineError) throw error;
      throw new EngineError('generate_failed', `embedding failed: ${(error as Error).message}`);
    });
  }

  private async contextFor({ model, context: generation, options }: LoadedModel): Promise<LlamaEmbeddingContext> {
    if (this.context && (this.context.model !== model || (await this.context.embedding).disposed)) await this.release();
    if (!this.context) {
      const embedding = model.createEmbeddingContext({ contextSize: options.contextSize, batchSize: options.contextSize, threads: generation.idealThreads });
      this.context = { model, embedding };
      embedding.catch(() => {
        if (this.context?.embedding === embedding) this.context = undefined;
      });
    }
    return this.context.embedding;
  }

  /** Frees the embedding context (after the request on it); the next request makes a new one. */
  async dispose(): Promise<void> {
    await this.running;
    await this.release();
  }

  private async release(): Promise<void> {
    const context = this.context;
    this.context = undefined;
    await context?.embedding.then((c) => c.dispose()).catch(() => {});
  }
}
