/**
 * Slot pressure as one engine sees it (pure, tested without an engine): whether at least half of its last
 * few grants took a slot from another conversation, dropping tokens worth keeping. Under pressure the
 * prefix cache saves a slot's state as soon as its generation ends (prefix-cache.ts `saveBehind`), while
 * the slot is idle, so the request that takes the slot next does not wait for the save; without it, the
 * save waits for the eviction, as most slots are taken again by their own conversation.
 */
export class EvictionPressure {
  private readonly recent: boolean[] = [];

  constructor(private readonly window = 8) {}

  /** A slot was granted: `evicted`, whether it dropped another conversation's tokens worth keeping. */
  note(evicted: boolean): void {
    this.recent.push(evicted);
    if (this.recent.length > this.window) this.recent.shift();
  }

  /** At least half of the window's grants evicted (so at least half a window of grants has been seen). */
  get high(): boolean {
    return this.recent.filter(Boolean).length * 2 >= this.window;
  }

  /** A new context: no grant seen yet. */
  reset(): void {
    this.recent.length = 0;
  }
}
