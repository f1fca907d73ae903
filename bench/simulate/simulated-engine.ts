/**
 * A SIMULATED engine, for the routing simulation only (bench/simulate.ts; never an engine of the app or of
 * its tests): one replica's slots, what each holds, the tiered prefix cache with Manifold's own eviction
 * rules (engine-bin/prefix-tiers.ts: RAM, spilled to disk, least recently used dropped) and slot choice
 * (engine-bin/slot-choice.ts), and a performance model in steps, as continuous batching runs: each step
 * prefills up to `chunkTokens` of the oldest prompts and decodes one token for every other running
 * sequence, and lasts `stepMs` (performance-models.ts). Time advances lazily: a stretch of decode-only
 * steps is one event. What the engine does to its cache is reported to its listener (the fronts' indexes).
 */
import type { PrefixTier } from '../../common/prefix-cache.js';
import { PrefixTiers } from '../../engine-bin/prefix-tiers.js';
import { chooseSlot } from '../../engine-bin/slot-choice.js';
import { BLOCK_TOKENS, sharedBlocks } from '../../core/router/block-hash.js';
import type { SimRequest } from './workloads.js';

export interface PerformanceModel {
  readonly name: string;
  /** Sequences one replica runs at once. */
  readonly slots: number;
  /** Prompt tokens one step prefills at most (chunked prefill). */
  readonly chunkTokens: number;
  /** How a step's prompt tokens are shared: the oldest prompt first (vLLM's chunked prefill), or evenly (llama.cpp's batch of all slots). */
  readonly prefillOrder: 'oldest' | 'even';
  /** One step: `prefillTokens` prefilled, `decoders` sequences decoding one token each, over `contextTokens` of their context. */
  stepMs(prefillTokens: number, decoders: number, contextTokens: number): number;
  /** ms per token of restoring a saved prefix from each tier. */
  readonly restoreMsPerToken: Readonly<Record<PrefixTier, number>>;
  /** KV bytes per token (what an entry of the prefix cache takes). */
  readonly kvBytesPerToken: number;
  /** The prefix cache's budgets. */
  readonly ramBytes: number;
  readonly diskBytes: number;
}

/** What the engine tells its listener, as a real engine's `started` and `done` do. */
export interface EngineEvents {
  /** A request took `slot`, which now holds `held` (the prompt's cached start); `restored`: the entry it was restored from. */
  started(replica: number, slot: number, held: readonly number[], restored: number | null, run: SimRun): void;
  /** The slot now holds the whole prompt; the request has its first token. */
  firstToken(run: SimRun, atMs: number): void;
  done(run: SimRun, atMs: number): void;
  /** The prefix cache admitted an entry (in RAM), spilled some to disk, dropped some; `by`: the request whose start did it (its report says so). */
  saved(replica: number, entry: number, tier: PrefixTier, blocks: readonly number[], by: SimRun): void;
  moved(replica: number, entry: number, tier: PrefixTier | null, by: SimRun): void;
}

export interface SimRun {
  readonly request: SimRequest;
  /** Which front sent it. */
  readonly front: number;
  slot: number;
  startedAt: number;
  cachedTokens: number;
  prefillLeft: number;
  restoreMsLeft: number;
  decodeLeft: number;
  firstTokenAt: number | null;
}

interface Slot {
  blocks: readonly number[];
  lastUsed: number;
  run: SimRun | null;
}

export class SimulatedEngine {
  private readonly slots: Slot[];
  private readonly tiers: PrefixTiers;
  /** Sent here while every slot was busy (several fronts, or a policy that binds at once): served in order. */
  readonly waiting: SimRun[] = [];
  private running: SimRun[] = [];
  /** When the current stretch of steps began, how long one lasts, and how many it has; null when idle. */
  private stretch: { at: number; stepMs: number; steps: number; prefill: boolean } | null = null;
  /** Bumped whenever nextEventAt changes, so the event loop skips the stale ones. */
  version = 0;
  busyMs = 0;
  routed = 0;

  constructor(
    readonly replica: number,
    private readonly model: PerformanceModel,
    private readonly events: EngineEvents,
    /** The oracle: one infinite cache every replica restores from (`shared`), instead of this engine's own. */
    private readonly shared: Set<number> | null = null,
    /**
     * What-if (Manifold's engines do not): a new conversation in an empty slot gets the start it shares with
     * another idle slot (a system prompt) copied from it, at a RAM restore's cost, instead of prefilling it.
     */
    private readonly slotCopy = false,
  ) {
    this.slots = Array.from({ length: model.slots }, () => ({ blocks: [], lastUsed: 0, run: null }));
    this.tiers = new PrefixTiers({ ramBytes: model.ramBytes, diskBytes: model.diskBytes });
  }

  get runningCount(): number {
    return this.running.length;
  }

  /** When its current stretch ends (its next event); null when idle. */
  get nextEventAt(): number | null {
    return this.stretch ? this.stretch.at + this.stretch.stepMs * this.stretch.steps : null;
  }

  /** A request bound here at `now`: it starts in a free slot, or waits for one. */
  submit(run: SimRun, now: number): void {
    this.advance(now);
    // A decode-only stretch ends with the step under way: the newcomer's prefill joins the next one.
    if (this.stretch && !this.stretch.prefill) this.stretch.steps = 1;
    this.routed++;
    if (this.running.length < this.slots.length) this.start(run, now);
    else this.waiting.push(run);
    this.plan(now);
    this.version++;
  }

  /** Runs the steps due by `now` (the event loop calls it at nextEventAt). */
  tick(now: number): void {
    this.advance(now);
    this.plan(now);
    this.version++;
  }

  private start(run: SimRun, now: number): void {
    const prompt = run.request.blocks;
    const choice = chooseSlot(
      this.slots.map((s, index) => ({ index, idle: s.run === null, tokens: s.blocks, lastUsed: s.lastUsed })),
      prompt,
    )!;
    const slot = this.slots[choice.index]!;
    // What the slot held past the shared start is saved before it is overwritten, as the engine saves an evicted slot.
    if (slot.blocks.length > choice.commonPrefix && !this.shared) this.save(slot.blocks, run);
    let held = choice.commonPrefix;
    let restored: number | null = null;
    let restoreMs = 0;
    if (this.slotCopy) {
      const copied = Math.max(...this.slots.map((s) => (s.run === null ? sharedBlocks(s.blocks, prompt) : 0)));
      if (copied > held) {
        restoreMs = (copied - held) * BLOCK_TOKENS * this.model.restoreMsPerToken.ram;
        held = copied;
      }
    }
    if (this.shared) {
      let i = 0;
      while (i < prompt.length && this.shared.has(prompt[i]!)) i++;
      if (i > held) {
        restoreMs += (i - held) * BLOCK_TOKENS * this.model.restoreMsPerToken.ram;
        held = i;
      }
    } else {
      const match = this.tiers.longestMatch(prompt);
      if (match && match.commonPrefix > held) {
        restoreMs += (match.commonPrefix - held) * BLOCK_TOKENS * this.model.restoreMsPerToken[match.entry.tier];
        held = match.commonPrefix;
        restored = match.entry.id;
        this.tiers.take(match.entry.id);
        this.events.moved(this.replica, match.entry.id, null, run);
      }
    }
    run.slot = choice.index;
    run.startedAt = now;
    run.cachedTokens = Math.min(held * BLOCK_TOKENS, run.request.promptTokens - 1);
    run.prefillLeft = run.request.promptTokens - run.cachedTokens;
    run.restoreMsLeft = restoreMs;
    run.decodeLeft = run.request.outputTokens;
    slot.run = run;
    slot.blocks = prompt.slice(0, held);
    this.running.push(run);
    this.events.started(this.replica, choice.index, slot.blocks, restored, run);
  }

  private save(blocks: readonly number[], by: SimRun): void {
    const admitted = this.tiers.admit(blocks, blocks.length * BLOCK_TOKENS * this.model.kvBytesPerToken);
    if (admitted.entry) this.events.saved(this.replica, admitted.entry.id, admitted.entry.tier, blocks, by);
    for (const e of admitted.spill) this.events.moved(this.replica, e.id, 'disk', by);
    for (const e of admitted.drop) this.events.moved(this.replica, e.id, null, by);
  }

  /** The next stretch: one step while any prompt is prefilled (its work depends on which), else decode-only steps until the first sequence ends. */
  private plan(now: number): void {
    if (this.stretch || this.running.length === 0) return;
    const prefilling = this.running.filter((r) => r.prefillLeft > 0);
    const decoders = this.running.length - prefilling.length;
    const context = this.running.reduce((sum, r) => sum + (r.prefillLeft > 0 ? 0 : r.request.promptTokens + r.request.outputTokens - r.decodeLeft), 0);
    if (prefilling.length > 0) {
      const chunk = Math.min(
        this.model.chunkTokens,
        prefilling.reduce((sum, r) => sum + r.prefillLeft, 0),
      );
      const restoreMs = prefilling.reduce((sum, r) => sum + r.restoreMsLeft, 0);
      this.stretch = { at: now, stepMs: this.model.stepMs(chunk, decoders, context) + restoreMs, steps: 1, prefill: true };
    } else {
      const steps = Math.min(...this.running.map((r) => r.decodeLeft));
      this.stretch = { at: now, stepMs: this.model.stepMs(0, decoders, context), steps, prefill: false };
    }
  }

  /** Applies the steps of the current stretch that ended by `now`. */
  private advance(now: number): void {
    const stretch = this.stretch;
    if (!stretch) return;
    const done = Math.min(stretch.steps, Math.floor((now - stretch.at) / stretch.stepMs + 1e-9));
    if (done <= 0) return;
    const endAt = stretch.at + done * stretch.stepMs;
    this.busyMs += done * stretch.stepMs;
    if (stretch.prefill) {
      let budget = this.model.chunkTokens;
      const prefilling = this.running.filter((r) => r.prefillLeft > 0).length;
      const share = this.model.prefillOrder === 'even' ? Math.ceil(budget / prefilling) : budget;
      for (const r of this.running) {
        if (r.prefillLeft > 0) {
          r.restoreMsLeft = 0;
          const take = Math.min(budget, share, r.prefillLeft);
          r.prefillLeft -= take;
          budget -= take;
          if (r.prefillLeft === 0) {
            r.firstTokenAt = endAt;
            r.decodeLeft--;
            this.slots[r.slot]!.blocks = r.request.blocks;
            this.events.firstToken(r, endAt);
          }
        } else r.decodeLeft--;
      }
    } else {
      for (const r of this.running) r.decodeLeft -= done;
    }
    this.stretch = done < stretch.steps ? { ...stretch, at: endAt, steps: stretch.steps - done } : null;
    const finished = this.running.filter((r) => r.prefillLeft === 0 && r.decodeLeft <= 0);
    if (finished.length > 0) {
      this.running = this.running.filter((r) => !finished.includes(r));
      for (const r of finished) {
        const slot = this.slots[r.slot]!;
        slot.run = null;
        slot.lastUsed = endAt;
        if (this.shared) for (const b of r.request.blocks) this.shared.add(b);
        this.events.done(r, endAt);
      }
      // A stretch that ended early (a new request came in) is cut where it stood; freed slots take the waiting.
      this.stretch = null;
      while (this.waiting.length > 0 && this.running.length < this.slots.length) this.start(this.waiting.shift()!, endAt);
    }
  }
}
