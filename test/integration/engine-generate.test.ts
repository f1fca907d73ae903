/** The real engine child on the generated model: sampling, prefix reuse, slots, queueing, cancel. */
import { describe, expect, it } from 'vitest';
import { promptTokens, startEngine, waitFor } from '../helpers/engines.js';

describe('engine generate', () => {
  it('gives identical tokens twice at temperature 0 with a seed, and different tokens for different seeds at temperature 1', async () => {
    const engine = await startEngine({ slots: 1 });
    const prompt = promptTokens(40);
    const greedy = { temperature: 0, seed: 7 };
    const a = await engine.generate({ tokens: prompt, maxTokens: 24, sampling: greedy, ignoreEos: true }).done;
    const b = await engine.generate({ tokens: prompt, maxTokens: 24, sampling: greedy, ignoreEos: true }).done;
    expect(a.completionTokens).toHaveLength(24);
    expect(b.completionTokens).toEqual(a.completionTokens);

    const hot = (seed: number) => ({ temperature: 1, topK: 0, topP: 1, minP: 0, seed });
    const c = await engine.generate({ tokens: prompt, maxTokens: 24, sampling: hot(1), ignoreEos: true }).done;
    const d = await engine.generate({ tokens: prompt, maxTokens: 24, sampling: hot(2), ignoreEos: true }).done;
    const again = await engine.generate({ tokens: prompt, maxTokens: 24, sampling: hot(1), ignoreEos: true }).done;
    expect(d.completionTokens).not.toEqual(c.completionTokens);
    expect(again.completionTokens).toEqual(c.completionTokens);
  });

  it('reuses the first turn from the slot on the second turn of a conversation', async () => {
    const engine = await startEngine({ slots: 2 });
    const turn1 = promptTokens(300, 1);
    const first = await engine.generate({ tokens: turn1, conversationId: 'c1', maxTokens: 16, sampling: { temperature: 0 }, ignoreEos: true }).done;
    expect(first.reusedTokens).toBe(0);
    expect(first.timings.prefillTokens).toBe(turn1.length);

    const turn2 = [...turn1, ...first.completionTokens, ...promptTokens(20, 5)];
    const second = await engine.generate({ tokens: turn2, conversationId: 'c1', maxTokens: 8, sampling: { temperature: 0 } }).done;
    expect(second.slot).toBe(first.slot);
    expect(second.reusedTokens).toBeGreaterThanOrEqual(turn1.length);
    expect(second.timings.prefillTokens).toBe(turn2.length - second.reusedTokens);
    expect(second.usage.promptTokens).toBe(turn2.length);

    // A different conversation goes to the other, untouched slot rather than evicting c1's prefix.
    const other = await engine.generate({ tokens: promptTokens(50, 99), conversationId: 'c2', maxTokens: 4 }).done;
    expect(other.slot).not.toBe(first.slot);
    const slots = await engine.slots();
    expect(slots.find((s) => s.slot === first.slot)?.conversationId).toBe('c1');
    expect(slots.find((s) => s.slot === first.slot)?.heldTokens).toBeGreaterThanOrEqual(turn2.length);
  });

  it('queues a third request on two slots and serves it when a slot frees', async () => {
    const engine = await startEngine({ slots: 2 });
    const handles = [0, 1, 2].map((i) => engine.generate({ tokens: promptTokens(64, i * 13), maxTokens: 24, sampling: { temperature: 0 }, ignoreEos: true }));
    const results = await Promise.all(handles.map((h) => h.done));
    for (const result of results) {
      expect(result.finishReason).toBe('length');
      expect(result.completionTokens).toHaveLength(24);
    }
    const started = await Promise.all(handles.map((h) => h.started));
    expect(new Set(started.slice(0, 2).map((s) => s.slot)).size).toBe(2);
    // The third waited in the engine's FIFO for one of the first two to finish.
    expect(started[2]!.queuedMs).toBeGreaterThan(Math.min(started[0]!.queuedMs, started[1]!.queuedMs));
    expect(started[2]!.queuedMs).toBeGreaterThan(results[0]!.timings.prefillMs / 2);
    const activity = await engine.activity();
    expect(activity).toMatchObject({ pending_prefill: 0, running_decode: 0, finished: 3 });
  });

  it('stops a stream within a few tokens of cancel, and the slot is idle again', async () => {
    const engine = await startEngine({ slots: 1 });
    let streamed = 0;
    let atCancel = -1;
    const handle = engine.generate({ tokens: promptTokens(32), maxTokens: 900, sampling: { temperature: 0 }, ignoreEos: true }, (chunk) => {
      streamed += chunk.tokens.length;
    });
    await waitFor(() => (streamed >= 5 ? true : undefined), '5 streamed tokens');
    expect(await handle.cancel()).toBe(true);
    // The engine answers the cancel after every token it had made by then (a stream's later tokens may
    // wait a moment in the child to travel together: engine-bin/transport.ts); it stops within a few more.
    atCancel = streamed;
    const done = await handle.done;
    expect(done.finishReason).toBe('cancelled');
    expect(done.completionTokens.length - atCancel).toBeLessThanOrEqual(4);
    expect(done.completionTokens.length).toBeLessThan(900);
    const [slot] = await engine.slots();
    expect(slot?.state).toBe('idle');
  });

  it('shows prefill, then decode, then idle in the slot view and activity during a request', async () => {
    const engine = await startEngine({ slots: 2, contextSize: 2048 });
    let tokens = 0;
    const seen = new Set<string>();
    const activities: { pending_prefill: number; running_decode: number }[] = [];
    const handle = engine.generate({ tokens: promptTokens(1500), maxTokens: 400, sampling: { temperature: 0 }, ignoreEos: true }, (c) => {
      tokens += c.tokens.length;
    });
    let finished = false;
    void handle.done.then(() => (finished = true));
    while (!finished) {
      const [slots, activity] = await Promise.all([engine.slots(), engine.activity()]);
      seen.add(slots.find((s) => s.state !== 'idle')?.state ?? 'idle');
      activities.push(activity);
      if (seen.has('decode') && tokens > 10) break;
    }
    expect(seen).toContain('prefill');
    expect(seen).toContain('decode');
    expect(activities.some((a) => a.pending_prefill === 1 && a.running_decode === 0)).toBe(true);
    expect(activities.some((a) => a.pending_prefill === 0 && a.running_decode === 1)).toBe(true);
    await handle.cancel();
    await handle.done;
    const after = await engine.slots();
    expect(after.every((s) => s.state === 'idle')).toBe(true);
    expect(await engine.activity()).toMatchObject({ pending_prefill: 0, running_decode: 0 });
  });

  it('ends at a stop string without sending any of it', async () => {
    const engine = await startEngine({ slots: 1 });
    const prompt = promptTokens(40, 3);
    const free = await engine.generate({ tokens: prompt, maxTokens: 40, sampling: { temperature: 0 }, ignoreEos: true }).done;
    // Pick a stop string from the middle of what greedy decoding produces for this prompt.
    const stop = free.text.slice(10, 13);
    expect(stop.length).toBe(3);
    let streamedText = '';
    const stopped = await engine.generate({ tokens: prompt, maxTokens: 40, stop: [stop], sampling: { temperature: 0 }, ignoreEos: true }, (c) => {
      streamedText += c.text;
    }).done;
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.stoppedBy).toBe(stop);
    expect(stopped.text).toBe(free.text.slice(0, free.text.indexOf(stop)));
    expect(streamedText).toBe(stopped.text);
  });
});
