/**
 * The order in which the engine's context fills each llama.cpp batch, as llama-server fills it: first one
 * token for every sequence that is decoding, then the waiting prompts in the order they arrived, each as
 * much as still fits (a long prompt is prefilled in batch-size chunks, interleaved with the decoders'
 * tokens). node-llama-cpp's default ("maximumParallelism") splits each batch evenly between all prompts,
 * so eight prompts sent at once all get their first token at the end; here the first gets it after its
 * own prefill. Every evaluation runs at node-llama-cpp's default priority, so priorities are not read.
 */
import type { BatchItem, PrioritizedBatchItem } from 'node-llama-cpp';

/** A node-llama-cpp `CustomBatchingPrioritizationStrategy`: `items` come in the order they were queued. */
export function decodeFirstThenPromptsInOrder({ items, size }: { items: readonly BatchItem[]; size: number }): PrioritizedBatchItem[] {
  const ordered = [...items.filter((item) => item.tokens.length === 1), ...items.filter((item) => item.tokens.length > 1)];
  const batch: PrioritizedBatchItem[] = [];
  let left = size;
  for (const item of ordered) {
    if (left === 0) break;
    const processAmount = Math.min(item.tokens.length, left);
    batch.push({ item, processAmount });
    left -= processAmount;
  }
  return batch;
}
