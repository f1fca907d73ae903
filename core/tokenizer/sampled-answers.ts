/**
 * The ids engines sampled for recent answers, by the answer's text, within a budget of ids (least
 * recently used out first). A chat client sends an answer back as text in the next turn's history; the
 * tokenizer child puts these ids where the prompt that asked for that answer ended (engine-bin/sampled-answer-splice.ts),
 * so the prompt holds what the serving engine's KV cache holds and its prefix reuse runs through the
 * answer. Only memory: after a restart a history is tokenized from its text, as before.
 */
import { LruMap } from '../../common/lru-map.js';

/** Ids kept in all (about 8 MiB of ids, with the texts beside them). */
const DEFAULT_BUDGET_TOKENS = 1 << 20;

export class SampledAnswers {
  private readonly byText: LruMap<string, number[]>;

  constructor(private readonly budgetTokens = DEFAULT_BUDGET_TOKENS) {
    this.byText = new LruMap(budgetTokens, (ids) => ids.length);
  }

  /** Remembers `tokens` as the ids behind `text` (an empty answer, or one past the budget, is not kept). */
  remember(text: string, tokens: readonly number[]): void {
    if (text.length === 0 || tokens.length === 0 || tokens.length > this.budgetTokens) return;
    this.byText.set(text, [...tokens]);
  }

  /** The ids remembered for `text` (refreshed as recently used), if any. */
  idsOf(text: string): number[] | undefined {
    return this.byText.get(text);
  }
}
