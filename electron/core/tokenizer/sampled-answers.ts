/**
 * The ids engines sampled for recent answers, by the answer's text, within a budget of ids (least
 * recently used out first). A chat client sends an answer back as text in the next turn's history; the
 * tokenizer child puts these ids where the prompt that asked for that answer ended (engine-bin/sampled-answer-splice.ts),
 * so the prompt holds what the serving engine's KV cache holds and its prefix reuse runs through the
 * answer. Only memory: after a restart a history is tokenized from its text, as before.
 */

/** Ids kept in all (about 8 MiB of ids, with the texts beside them). */
const DEFAULT_BUDGET_TOKENS = 1 << 20;

export class SampledAnswers {
  private readonly byText = new Map<string, number[]>();
  private tokens = 0;

  constructor(private readonly budgetTokens = DEFAULT_BUDGET_TOKENS) {}

  /** Remembers `tokens` as the ids behind `text` (an empty answer, or one past the budget, is not kept). */
  remember(text: string, tokens: readonly number[]): void {
    if (text.length === 0 || tokens.length === 0 || tokens.length > this.budgetTokens) return;
    this.forget(text);
    this.byText.set(text, [...tokens]);
    this.tokens += tokens.length;
    for (const [oldest, ids] of this.byText) {
      if (this.tokens <= this.budgetTokens) break;
      this.byText.delete(oldest);
      this.tokens -= ids.length;
    }
  }

  /** The ids remembered for `text` (refreshed as recently used), if any. */
  idsOf(text: string): number[] | undefined {
    const tokens = this.byText.get(text);
    if (tokens === undefined) return undefined;
    this.byText.delete(text);
    this.byText.set(text, tokens);
    return tokens;
  }

  private forget(text: string): void {
    const ids = this.byText.get(text);
    if (ids === undefined) return;
    this.byText.delete(text);
    this.tokens -= ids.length;
  }
}
