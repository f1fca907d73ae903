/**
 * The oracle line of the chat benchmarks, pure logic: how many of each prompt's tokens any router (any
 * cache holding everything ever computed) could have reused. A prompt can reuse the longest common
 * prefix with what an engine has seen before it was sent: its own conversation's earlier prompts
 * followed by the answers as sampled (the KV cache holds the sampled ids, so an answer that
 * re-tokenizes differently as text stops the reuse there), and other conversations' prompts (a system
 * prompt they share). The last prompt token is never counted: an engine evaluates it again to get the
 * next token's logits, whatever it holds. The measured hit rate divided by this share is how much of
 * the reachable reuse a router got.
 */

export interface SentPrompt {
  conversation: number;
  /** The prompt's token ids, as the server tokenizes it. */
  prompt: readonly number[];
  /** The answer's sampled token ids. */
  answer: readonly number[];
}

/** Length of the longest common prefix of `tokens` and the concatenation of `parts`. */
export function commonPrefixLength(tokens: readonly number[], ...parts: (readonly number[])[]): number {
  let n = 0;
  for (const part of parts) {
    for (const token of part) {
      if (n >= tokens.length || tokens[n] !== token) return n;
      n++;
    }
  }
  return n;
}

/** For each prompt in the order sent, the tokens any cache could have served. */
export function reusableTokens(sent: readonly SentPrompt[]): number[] {
  return sent.map((request, i) => {
    let best = 0;
    for (let j = 0; j < i; j++) {
      const earlier = sent[j]!;
      const reach =
        earlier.conversation === request.conversation
          ? commonPrefixLength(request.prompt, earlier.prompt, earlier.answer)
          : commonPrefixLength(request.prompt, earlier.prompt);
      best = Math.max(best, reach);
    }
    return Math.min(best, Math.max(0, request.prompt.length - 1));
  });
}

/** The oracle's share of all prompt tokens (0 when there are none). */
export function oracleShare(sent: readonly SentPrompt[]): number {
  const total = sent.reduce((s, r) => s + r.prompt.length, 0);
  return total ? reusableTokens(sent).reduce((s, n) => s + n, 0) / total : 0;
}
