/**
 * Where a rendered chat prompt holds answers an engine sampled, pure logic: the prompt split into text
 * pieces, to be tokenized one by one, and the answers' own sampled ids between them. Tokenizing the whole
 * text again can split an answer otherwise than it was sampled, and an engine's prefix reuse ends at the
 * first id that differs. The common case: a node-llama-cpp engine's text drops the leading space of an
 * answer's first piece (as detokenizing a sequence does), so the rendered text has none there and the
 * tokens from the newline before the answer on differ; with the test model about half the answers. With
 * the sampled ids the next turn's prompt holds what the engine's KV cache holds, that space included. The
 * previous turn's prompt ended where the answer begins and was cut the same way, so its pieces come out
 * the same again. An answer is spliced only where its ids, detokenized on their own, make its text.
 */
import type { SampledAnswer } from '../common/tokenizer-protocol.js';

/** The text sampled ids make, and the ids that make it (trailing control tokens dropped); null when they make no plain text. */
export type SampledText = (ids: readonly number[]) => { text: string; ids: number[] } | null;

/** `text` as pieces in order: strings to tokenize, and the sampled ids of each answer found in it (searched in the order given). */
export function spliceSampledAnswers(text: string, answers: readonly SampledAnswer[], sampledText: SampledText): (string | number[])[] {
  const pieces: (string | number[])[] = [];
  let cursor = 0;
  for (const answer of answers) {
    const at = text.indexOf(answer.text, cursor);
    if (at < 0) continue;
    const sampled = sampledText(answer.tokens);
    if (sampled === null || sampled.text !== answer.text) continue;
    pieces.push(text.slice(cursor, at), sampled.ids);
    cursor = at + answer.text.length;
  }
  pieces.push(text.slice(cursor));
  return pieces;
}
