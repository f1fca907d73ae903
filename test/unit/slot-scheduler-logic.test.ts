/** The slot scheduler's logic on scripted slots: FIFO hand-over, cancel while queued or running, counters and the view. */
import { describe, expect, it } from 'vitest';
import { SlotScheduler, type ScheduledSlot } from '../../engine-bin/slot-scheduler.js';

/** A slot as the scheduler sees it, holding `tokens`. */
function scriptedSlot(index: number, tokens: number[] = []): ScheduledSlot {
  return { index, state: 'idle', conversationId: null, lastUsed: null, tokens, heldTokens: tokens.length };
}

function schedulerWith(...slots: ScheduledSlot[]): SlotScheduler<ScheduledSlot> {
  const scheduler = new SlotScheduler<ScheduledSlot>();
  scheduler.useSlots(slots);
  return scheduler;
}

/** What an acquire has come to once the microtasks queued so far have run: a slot index, null, or still waiting. */
async function grant(acquired: Promise<ScheduledSlot | null>): Promise<number | null | 'waiting'> {
  const waiting = new Promise<'waiting'>((resolve) => setImmediate(() => resolve('waiting')));
  return Promise.race([acquired.then((slot) => slot?.index ?? null), waiting]);
}

describe('slot scheduler logic', () => {
  it('grants idle slots at once, queues the rest and hands each freed slot to the oldest waiter', async () => {
    const [a, b] = [scriptedSlot(0), scriptedSlot(1)];
    const scheduler = schedulerWith(a, b);
    const first = await scheduler.acquire(1, [5, 6], 'c1');
    const second = await scheduler.acquire(2, [7, 8], null);
    expect([first?.index, second?.index].sort()).toEqual([0, 1]);
    expect(first).toMatchObject({ state: 'prefill', conversationId: 'c1' });

    const third = scheduler.acquire(3, [9], null);
    const fourth = scheduler.acquire(4, [10], null);
    expect(await grant(third)).toBe('waiting');
    expect(scheduler.activity(0)).toEqual({ pending_prefill: 4, running_decode: 0, undrained_replies: 0, finished: 0 });

    scheduler.startDecoding(second!);
    expect(scheduler.activity(2)).toEqual({ pending_prefill: 3, running_decode: 1, undrained_replies: 2, finished: 0 });
    scheduler.release(2, second!);
    // The oldest waiter gets the freed slot; the newer one still waits.
    expect(await grant(third)).toBe(second!.index);
    expect(await grant(fourth)).toBe('waiting');
    expect(scheduler.activity(0)).toEqual({ pending_prefill: 3, running_decode: 0, undrained_replies: 0, finished: 1 });

    scheduler.release(1, first!);
    expect(await grant(fourth)).toBe(first!.index);
    expect(first!.lastUsed).not.toBeNull();
  });

  it('gives a slot held outside any request (a prefix evaluated again) to the oldest waiter when the hold ends', async () => {
    const [a, b] = [scriptedSlot(0), scriptedSlot(1)];
    const scheduler = schedulerWith(a, b);
    scheduler.hold(a);
    scheduler.hold(b);
    expect(scheduler.busyWith()).toEqual(['prefill']);
    const older = scheduler.acquire(1, [1], null);
    const newer = scheduler.acquire(2, [2], null);
    expect(await grant(older)).toBe('waiting');
    scheduler.unhold(b);
    expect(await grant(older)).toBe(1);
    expect(await grant(newer)).toBe('waiting');
    scheduler.unhold(a);
    expect(await grant(newer)).toBe(0);
    expect(scheduler.activity(0)).toMatchObject({ pending_prefill: 2, finished: 0 });
  });

  it('drops a cancelled request from the queue (answered with no slot) and keeps the order of the others', async () => {
    const scheduler = schedulerWith(scriptedSlot(0));
    const running = await scheduler.acquire(1, [1], null);
    const cancelled = scheduler.acquire(2, [2], null);
    const next = scheduler.acquire(3, [3], null);
    expect(scheduler.cancel(2)).toBe(true);
    expect(await grant(cancelled)).toBeNull();
    expect(scheduler.activity(0)).toMatchObject({ pending_prefill: 2, finished: 1 });
    // Known no more: a second cancel finds nothing.
    expect(scheduler.cancel(2)).toBe(false);
    scheduler.release(1, running!);
    expect(await grant(next)).toBe(0);
    expect(scheduler.activity(0)).toMatchObject({ pending_prefill: 1, finished: 2 });
  });

  it('marks a running request to stop, and forgets it once it has ended', async () => {
    const scheduler = schedulerWith(scriptedSlot(0));
    const slot = await scheduler.acquire(7, [1], null);
    expect(scheduler.isCancelled(7)).toBe(false);
    expect(scheduler.cancel(7)).toBe(true);
    expect(scheduler.isCancelled(7)).toBe(true);
    scheduler.startDecoding(slot!);
    scheduler.release(7, slot!);
    expect(scheduler.isCancelled(7)).toBe(false);
    expect(scheduler.cancel(7)).toBe(false);
    expect(scheduler.cancel(99)).toBe(false);
    expect(scheduler.activity(0)).toEqual({ pending_prefill: 0, running_decode: 0, undrained_replies: 0, finished: 1 });
    expect(scheduler.busyWith()).toEqual([]);
  });

  it("gives a conversation's next turn the slot that holds its start, and shows the slots", async () => {
    const scheduler = schedulerWith(scriptedSlot(0, [1, 2, 3]), scriptedSlot(1, [8, 9]));
    const slot = await scheduler.acquire(1, [8, 9, 10], 'talk');
    expect(slot?.index).toBe(1);
    expect(scheduler.view()).toEqual([
      { slot: 0, state: 'idle', heldTokens: 3, conversationId: null, lastUsed: null },
      { slot: 1, state: 'prefill', heldTokens: 2, conversationId: 'talk', lastUsed: null },
    ]);
    expect(scheduler.busyWith()).toEqual(['prefill']);
  });

  it('queues every request while it has no slots (a torn-down engine)', async () => {
    const scheduler = new SlotScheduler<ScheduledSlot>();
    expect(scheduler.view()).toEqual([]);
    const waiting = scheduler.acquire(1, [1], null);
    expect(await grant(waiting)).toBe('waiting');
    expect(scheduler.cancel(1)).toBe(true);
    expect(await grant(waiting)).toBeNull();
  });
});
