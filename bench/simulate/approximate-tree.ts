/**
 * SGLang's cache-aware router, as its router documents it, for comparison in the simulation: per worker an
 * approximate tree of what was sent to it (not what its cache holds), LRU-capped; a request goes to the worker
 * whose tree matches most of it when the match rate passes `cacheThreshold` (0.3), else to the worker with the
 * smallest tree; unless the load is imbalanced (max − min > `balanceAbsThreshold` 64 and max > `balanceRelThreshold`
 * 1.5 × min), when it goes to the least loaded. SGLang matches request text; here the blocks stand for it.
 */
import { EstimatedPrefixIndex } from '../../core/router/prefix-index.js';

export const SGLANG_DEFAULTS = { cacheThreshold: 0.3, balanceAbsThreshold: 64, balanceRelThreshold: 1.5 } as const;

export class ApproximateTree {
  private readonly trees: EstimatedPrefixIndex;
  private readonly sizes: number[];

  constructor(
    replicas: number,
    private readonly settings = SGLANG_DEFAULTS,
    capacity = 2 ** 22,
  ) {
    this.trees = new EstimatedPrefixIndex(capacity);
    this.sizes = new Array<number>(replicas).fill(0);
  }

  /** The worker for a prompt of these blocks, given each worker's load (requests running and queued). */
  choose(blocks: readonly number[], load: readonly number[]): number {
    const max = Math.max(...load);
    const min = Math.min(...load);
    if (max - min > this.settings.balanceAbsThreshold && max > this.settings.balanceRelThreshold * min) return load.indexOf(min);
    let best = 0;
    let matched = -1;
    for (let r = 0; r < load.length; r++) {
      const m = this.trees.matchedBlocks(r, blocks);
      if (m > matched) [best, matched] = [r, m];
    }
    if (blocks.length > 0 && matched / blocks.length > this.settings.cacheThreshold) return best;
    return this.sizes.indexOf(Math.min(...this.sizes));
  }

  /** The prompt was sent to `replica`: its tree holds it now. */
  note(replica: number, blocks: readonly number[]): void {
    this.trees.noteServed(replica, blocks);
    this.sizes[replica]! += blocks.length;
  }
}
