/**
 * A generated token's logprobs from node-llama-cpp's sampling metadata (`evaluateWithMetadata` with
 * `probabilities`: the candidates the sampler chain kept — after top-k, top-p, min-p and temperature,
 * and the grammar — with their probabilities, most likely first). Each token's text is detokenized
 * after the tokens generated before it, as the generated text is (token-text.ts), so the chosen tokens'
 * texts join into the generated text (a leading space at the very start is dropped in both).
 */
import type { LlamaModel, Token } from 'node-llama-cpp';
import { logprobOfProbability, type GeneratedLogprob, type TokenLogprob } from '../common/engine-protocol.js';

const entry = (model: LlamaModel, previous: readonly number[], token: number, probability: number): TokenLogprob => ({
  token,
  text: model.detokenize([token as Token], false, previous as Token[]),
  logprob: logprobOfProbability(probability),
});

/**
 * `token`'s logprob and the `top` likeliest candidates of `probabilities` (fewer when the sampler kept
 * fewer); `previous`: the last tokens generated before it (the detokenizer's context).
 */
export function generatedLogprob(
  model: LlamaModel,
  previous: readonly number[],
  token: number,
  probabilities: ReadonlyMap<Token, number>,
  top: number,
): GeneratedLogprob {
  const alternatives: TokenLogprob[] = [];
  for (const [candidate, probability] of probabilities) {
    if (alternatives.length >= top) break;
    alternatives.push(entry(model, previous, candidate, probability));
  }
  return { ...entry(model, previous, token, probabilities.get(token as Token) ?? 0), top: alternatives };
}
