/** The loader's suggested layout from the fit estimate: replicas per card group, context and slots filling the room. */
import { describe, expect, it } from 'vitest';
import { suggestLayout, type LayoutFacts } from '../../core/models/layout-suggestion.js';

const GiB = 1024 ** 3;
/** 128 KiB of KV per token (a ~7B model at f16). */
const facts = (patch: Partial<LayoutFacts>): LayoutFacts => ({
  weightsBytes: 4 * GiB,
  contextLength: 32768,
  kvBytes: (context, slots) => context * slots * 128 * 1024,
  cardsFreeBytes: null,
  freeRamBytes: 64 * GiB,
  engineRuntimeBytes: 256 * 1024 ** 2,
  ...patch,
});

describe('suggestLayout', () => {
  it('puts one replica on each card that holds the weights and KV, with the slots that fit', () => {
    const layout = suggestLayout(facts({ cardsFreeBytes: [8 * GiB, 8 * GiB, 8 * GiB, 8 * GiB] }));
    expect(layout).toMatchObject({ replicas: 4, contextSize: 4096, device: 'gpu' });
    // (8 GiB / 1.05 − 4 GiB) / 0.5 GiB per 4096-token slot = 7.2 → 7 slots.
    expect(layout.slots).toBe(7);
    expect(layout.reason).toMatch(/^4 replicas of 1 card: /);
  });

  it('groups cards when one card cannot hold the model', () => {
    const layout = suggestLayout(facts({ weightsBytes: 10 * GiB, cardsFreeBytes: [8 * GiB, 8 * GiB, 8 * GiB, 8 * GiB] }));
    expect(layout).toMatchObject({ replicas: 2, device: 'gpu', contextSize: 4096, slots: 8 });
  });

  it('shortens the context before giving up a card group, and never beyond the model', () => {
    const tight = suggestLayout(facts({ cardsFreeBytes: [4.5 * GiB] }));
    expect(tight).toMatchObject({ replicas: 1, device: 'gpu', contextSize: 2048, slots: 1 });
    expect(suggestLayout(facts({ contextLength: 1024, cardsFreeBytes: [8 * GiB] })).contextSize).toBe(1024);
  });

  it('falls back to one CPU replica in RAM, saying why, and says when even that does not fit', () => {
    expect(suggestLayout(facts({ cardsFreeBytes: [] }))).toMatchObject({
      replicas: 1,
      device: 'cpu',
      contextSize: 4096,
      slots: 8,
      reason: expect.stringMatching(/^no GPU: /),
    });
    expect(suggestLayout(facts({ weightsBytes: 20 * GiB, cardsFreeBytes: [8 * GiB] })).reason).toMatch(/^no card group holds the model: CPU engines/);
    expect(suggestLayout(facts({ freeRamBytes: 2 * GiB })).reason).toMatch(/does not fit in free RAM/);
  });
});
