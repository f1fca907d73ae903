/**
 * The real engine child serves prompts sent at once in the order they came, as llama-server does: the first
 * prompt is prefilled and decoding while later ones are still being prefilled, instead of all prompts
 * sharing every batch and getting their first tokens together (node-llama-cpp's default).
 */
import { describe, expect, it } from 'vitest';
import { promptTokens, startEngine } from '../helpers/engines.js';

describe('engine batch order', () => {
  it('gives the first of four long prompts sent at once its first tokens before the last prompt has its first', async () => {
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
    // The first request decodes while the others are prefilled: several of its tokens come before the last request's first.
    const firstBeforeLast = events.slice(0, firstTokenAt[3]).filter((i) => i === 0).length;
    expect(firstBeforeLast).toBeGreaterThanOrEqual(3);
  });
});
