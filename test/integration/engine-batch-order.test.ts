/**
 * The real engine child serves prompts sent at once in the order they came, as llama-server does: the first
 * prompt is prefilled and has its first token while later ones are still waiting for their prefill,
 * instead of all prompts sharing every batch and getting their first tokens together (node-llama-cpp's
 * default).
 */
import { describe, expect, it } from 'vitest';
import { promptTokens, startEngine } from '../helpers/engines.js';

describe('engine batch order', () => {
  it('prefills four long prompts sent at once one after another, in the order they came', async () => {
    // Batches of 128 tokens: each 600-token prompt needs 5 of them, so the four need 19.
    const engine = await startEngine({ slots: 4, contextSize: 1024, batchSize: 128 });
    const events: number[] = [];
    const handles = [0, 1, 2, 3].map((i) =>
      engine.generate({ tokens: promptTokens(600, i * 31 + 1), maxTokens: 24, sampling: { temperature: 0 }, ignoreEos: true }, (chunk) => {
        for (let t = 0; t < chunk.tokens.length; t++) events.push(i);
      }),
    );
    const results = await Promise.all(handles.map((h) => h.done));
    for (const result of results) expect(result.completionTokens).toHaveLength(24);

    const firstTokenAt = [0, 1, 2, 3].map((i) => events.indexOf(i));
    expect(firstTokenAt).toEqual([...firstTokenAt].sort((a, b) => a - b));
    // Served in order, the first prompt's prefill is over after its own 600 tokens; the last one's after
    // all 2,400 (shared evenly, all four would end together: measured 0.84 with node-llama-cpp's default order).
    // Durations from the same run, so noise scales both; in order they measured 0.25–0.52 (a busy CI machine).
    expect(results[0]!.timings.prefillMs).toBeLessThan(results[3]!.timings.prefillMs * 0.7);
  });
});
