/**
 * A thinking budget's count: fed each generated token's text, it follows whether the answer is inside the
 * template's thinking tags (from the start when the prompt opened them, or once the answer opens them
 * first thing) and says when the budget is spent there, so the end tag must be written now. An answer that
 * closes its thinking itself, or starts with something else, is left alone from then on. Pure logic.
 */
export interface ThinkingBudgetSpec {
  tokens: number;
  start: string;
  end: string;
  open: boolean;
}

export class ThinkingBudget {
  private thinking: boolean;
  private over = false;
  private spent = 0;
  private seen = '';

  constructor(private readonly spec: ThinkingBudgetSpec) {
    this.thinking = spec.open;
  }

  get end(): string {
    return this.spec.end;
  }

  /** Whether the end tag is due before the first token: a budget of 0 in a thinking the prompt opened. */
  dueAtOnce(): boolean {
    return this.spec.open && this.spec.tokens === 0 ? this.finish() : false;
  }

  /** Counts one token (`text`: what it added to the answer); true when the budget is spent now and the end tag is due. */
  spend(text: string): boolean {
    if (this.over) return false;
    this.seen += text;
    if (!this.thinking) {
      const visible = this.seen.trimStart();
      if (this.spec.start && visible.startsWith(this.spec.start)) {
        this.thinking = true;
        this.seen = visible.slice(this.spec.start.length);
      } else if (visible !== '' && !this.spec.start.startsWith(visible)) this.over = true;
      // The token that opened the thinking is not thinking yet.
      return this.thinking && this.spec.tokens === 0 ? this.finish() : false;
    }
    if (this.seen.includes(this.spec.end)) {
      this.over = true;
      return false;
    }
    this.spent++;
    return this.spent >= this.spec.tokens ? this.finish() : false;
  }

  private finish(): boolean {
    this.over = true;
    return true;
  }
}
