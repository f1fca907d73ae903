/**
 * The slot scheduler: which slot serves a request (slot-choice.ts), the FIFO of requests waiting for a slot
 * (a freed slot goes straight to the oldest waiter, chosen for that waiter's prompt, so a newcomer cannot
 * overtake it), cancel (a queued request leaves the queue; a running one is marked to stop at its next
 * token), and the counters behind `activity` and the slots view. It sees slots only as ScheduledSlot, so
 * its logic is tested without a model (test/unit/slot-scheduler-logic.test.ts).
 */
import type { Activity, SlotState, SlotView } from '../common/engine-protocol.js';
import { chooseSlot } from './slot-choice.js';

/** What the scheduler reads and writes on a slot (the engine's slots, slot.ts, add their sequence). */
export interface ScheduledSlot {
  readonly index: number;
  state: SlotState;
  conversationId: string | null;
  lastUsed: number | null;
  /** The tokens the slot holds now (slot choice compares prompts with them). */
  readonly tokens: readonly number[];
  /** How many tokens the slot holds (the slots view). */
  readonly heldTokens: number;
}

interface Waiter<S> {
  readonly prompt: readonly number[];
  readonly conversationId: string | null;
  readonly grant: (slot: S | null) => void;
}

export class SlotScheduler<S extends ScheduledSlot> {
  private slots: readonly S[] | undefined;
  private readonly waiting: Waiter<S>[] = [];
  private readonly cancelled = new Set<number>();
  /** Requests by id: the waiter while queued, the slot once granted. */
  private readonly running = new Map<number, Waiter<S> | S>();
  private prefilling = 0;
  private decoding = 0;
  private finished = 0;

  /** The slots to schedule on: a new context's after a load or an allocation; none while there is no context. */
  useSlots(slots: readonly S[] | undefined): void {
    this.slots = slots;
  }

  /**
   * A slot for request `id`, counted as pending prefill from now: at once when nobody waits and a slot is
   * idle, else when a freed slot comes to it in FIFO order; null when it was cancelled while queued (then it
   * counts as finished). The granted slot is marked as serving `conversationId`.
   */
  async acquire(id: number, prompt: readonly number[], conversationId: string | null): Promise<S | null> {
    this.prefilling++;
    const slot = await this.waitForSlot(id, prompt, conversationId);
    if (!slot) {
      this.prefilling--;
      this.finished++;
      return null;
    }
    this.running.set(id, slot);
    slot.conversationId = conversationId;
    return slot;
  }

  /** The request on `slot` has its first token: prefill is over, it is decoding. */
  startDecoding(slot: S): void {
    slot.state = 'decode';
    this.prefilling--;
    this.decoding++;
  }

  /** Whether request `id` was asked to stop (checked after each token). */
  isCancelled(id: number): boolean {
    return this.cancelled.has(id);
  }

  /** Request `id` has ended on `slot`: the slot is idle again and goes to the oldest waiter. */
  release(id: number, slot: S): void {
    if (slot.state === 'decode') this.decoding--;
    else this.prefilling--;
    this.finished++;
    this.running.delete(id);
    this.cancelled.delete(id);
    slot.state = 'idle';
    slot.lastUsed = Date.now();
    this.handOver(slot);
  }

  /** Holds `slot` for work outside any request (a rebuild evaluating a prefix again); it counts as prefill. */
  hold(slot: S): void {
    slot.state = 'prefill';
    this.prefilling++;
  }

  /** Ends a hold: the slot is idle again and goes to the oldest waiter. */
  unhold(slot: S): void {
    slot.state = 'idle';
    this.prefilling--;
    this.handOver(slot);
  }

  /** Marks a generation to stop at its next token (or drops it from the queue); false when unknown. */
  cancel(id: number): boolean {
    const entry = this.running.get(id);
    if (!entry) return false;
    const queuedAt = 'grant' in entry ? this.waiting.indexOf(entry) : -1;
    if (queuedAt >= 0) {
      this.waiting.splice(queuedAt, 1);
      this.running.delete(id);
      (entry as Waiter<S>).grant(null);
    } else {
      this.cancelled.add(id);
    }
    return true;
  }

  /** What keeps the engine from being idle, in the barrier's words. */
  busyWith(): string[] {
    return [...(this.prefilling || this.waiting.length ? ['prefill'] : []), ...(this.decoding ? ['decode'] : [])];
  }

  /** The request counters of `activity` (the engine adds a rebuild's re-evaluation). */
  activity(undrainedReplies: number): Omit<Activity, 're_evaluation'> {
    return {
      pending_prefill: this.prefilling,
      running_decode: this.decoding,
      undrained_replies: undrainedReplies,
      finished: this.finished,
    };
  }

  view(): SlotView[] {
    return (this.slots ?? []).map((s) => ({
      slot: s.index,
      state: s.state,
      heldTokens: s.heldTokens,
      conversationId: s.conversationId,
      lastUsed: s.lastUsed,
    }));
  }

  private waitForSlot(id: number, prompt: readonly number[], conversationId: string | null): Promise<S | null> {
    if (this.waiting.length === 0) {
      const slot = this.pick(this.slots ?? [], prompt, conversationId);
      if (slot) return Promise.resolve(slot);
    }
    return new Promise((grant) => {
      const waiter: Waiter<S> = { prompt, conversationId, grant };
      this.waiting.push(waiter);
      this.running.set(id, waiter);
    });
  }

  /** Hands a freed slot to the oldest waiter, choosing for that waiter's prompt. */
  private handOver(slot: S): void {
    const waiter = this.waiting.shift();
    if (!waiter) return;
    waiter.grant(this.pick(this.slots ?? [slot], waiter.prompt, waiter.conversationId));
  }

  private pick(slots: readonly S[], prompt: readonly number[], conversationId: string | null): S | null {
    const choice = chooseSlot(
      slots.map((s) => ({ index: s.index, idle: s.state === 'idle', tokens: s.tokens, lastUsed: s.lastUsed ?? 0, conversationId: s.conversationId })),
      prompt,
      conversationId,
    );
    if (!choice) return null;
    const slot = slots[choice.index]!;
    slot.state = 'prefill';
    return slot;
  }
}
