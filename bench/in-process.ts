/** One stream on node-llama-cpp driven in-process: the baseline the front is measured against (in `overhead`'s plain process, and in `gpu`'s own). */
import type { LlamaContextSequence, Token } from 'node-llama-cpp';

export interface InProcessStream {
  ttftMs: number;
  /** Tokens after the first, over the time after it. */
  decodeTokensPerSecond: number;
  tokens: number;
}

/** Clears `sequence`, evaluates `prompt` greedily and decodes `answerTokens` tokens. */
export async function inProcessStream(sequence: LlamaContextSequence, prompt: readonly number[], answerTokens: number): Promise<InProcessStream> {
  await sequence.clearHistory();
  const started = performance.now();
  let first = 0;
  let count = 0;
  for await (const _token of sequence.evaluate(prompt as Token[], { temperature: 0 })) {
    if (!first) first = performance.now();
    if (++count >= answerTokens) break;
  }
  const ended = performance.now();
  return { ttftMs: first - started, decodeTokensPerSecond: ((count - 1) * 1000) / (ended - first), tokens: count };
}
