/**
 * Where a rendered chat prompt holds answers an engine sampled, pure logic: the prompt split into text
 * pieces, to be tokenized one by one, and the answers' own sampled ids between them. Tokenizing the whole
 * text again can split an answer otherwise than it was sampled, and an engine's prefix reuse ends at the
 * first id that differs. The common case: a node-llama-cpp engine's text drops the leading space of an
 * answer's first piece (as detokenizing a sequence does), so the rendered text has none there and the
 * tokens from the newline before the answer on differ; with the test model about half the answers. With
 * the sampled ids the next turn's prompt holds what the engine's KV cache holds, that space included.
 *
 * Each answer is anchored where its message's text stands in the rendered prompt (the tokenizer host
 * finds that by rendering the messages once more with a marker in its place: `at`), which is where the
 * prompt that asked for it ended, so the text before it is cut where that prompt was. An answer is spliced
 * only where its ids, detokenized on their own, make its text; the host also keeps an answer whole when
 * the text after it does not start with a control token (a vocabulary that puts a space before every
 * separately tokenized text would add one there).
 */

/** The text sampled ids make, and the ids that make it (trailing special tokens dropped); null when they make no plain text. */
export type SampledTextOf = (ids: readonly number[]) => { text: string; ids: number[] } | null;

/** An answer in the rendered prompt: where it starts, its text, and the ids its engine sampled. */
export interface AnswerAnchor {
  at: number;
  text: string;
  tokens: readonly number[];
}

/**
 * `text` as pieces in order: strings to tokenize, and the sampled ids of each anchored answer whose text
 * stands at its anchor and whose ids make that text (anchors in increasing order; one inside an earlier
 * answer is skipped).
 */
export function spliceSampledAnswers(text: string, anchors: readonly AnswerAnchor[], sampledTextOf: SampledTextOf): (string | number[])[] {
  const pieces: (string | number[])[] = [];
  let cursor = 0;
  for (const anchor of anchors) {
    if (anchor.at < cursor || !text.startsWith(anchor.text, anchor.at)) continue;
    const sampled = sampledTextOf(anchor.tokens);
    if (sampled === null || sampled.text !== anchor.text) continue;
    pieces.push(text.slice(cursor, anchor.at), sampled.ids);
    cursor = anchor.at + anchor.text.length;
  }
  pieces.push(text.slice(cursor));
  return pieces;
}
