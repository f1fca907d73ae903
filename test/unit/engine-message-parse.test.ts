/** Core's one parse of an engine message: the hand check of `tokens` accepts and refuses exactly what the schema does. */
import { describe, expect, it } from 'vitest';
import { engineMessageSchema, parseEngineMessage } from '../../common/engine-protocol.js';

const tokens = { type: 'tokens', id: 7, tokens: [301, 0], text: ' hi' };

/** What the full schema makes of `raw`: the data, or the issues' paths and messages. */
function bySchema(raw: unknown): unknown {
  const parsed = engineMessageSchema.safeParse(raw);
  return parsed.success ? { data: parsed.data } : { issues: parsed.error.issues.map((i) => [i.path, i.message]) };
}

function byParse(raw: unknown): unknown {
  const parsed = parseEngineMessage(raw);
  return parsed.success ? { data: parsed.data } : { issues: parsed.error.issues.map((i) => [i.path, i.message]) };
}

describe('engine message parse', () => {
  it('accepts a tokens message as the schema does, without keys the schema does not name', () => {
    expect(byParse(tokens)).toEqual({ data: tokens });
    expect(byParse({ ...tokens, extra: 1 })).toEqual({ data: tokens });
    expect(byParse({ ...tokens, tokens: [], text: '' })).toEqual(bySchema({ ...tokens, tokens: [], text: '' }));
  });

  it.each([
    ['a negative id', { ...tokens, id: -1 }],
    ['a fractional id', { ...tokens, id: 1.5 }],
    ['an id past the safe integers', { ...tokens, id: 2 ** 53 }],
    ['a string id', { ...tokens, id: '7' }],
    ['a negative token', { ...tokens, tokens: [1, -2] }],
    ['a fractional token', { ...tokens, tokens: [0.5] }],
    ['a NaN token', { ...tokens, tokens: [Number.NaN] }],
    ['tokens that are not an array', { ...tokens, tokens: '301' }],
    ['no text', { type: 'tokens', id: 7, tokens: [1] }],
    ['text that is not a string', { ...tokens, text: 3 }],
    ['a null id', { ...tokens, id: null }],
  ])("refuses a tokens message with %s, in the schema's words", (_, raw) => {
    const result = byParse(raw);
    expect(result).toHaveProperty('issues');
    expect(result).toEqual(bySchema(raw));
  });

  it('parses the other messages with the schema', () => {
    const done = { type: 'cancelled', id: 3, found: true };
    expect(byParse(done)).toEqual({ data: done });
    for (const raw of ['just a string', null, { type: 'teleport', id: 1 }, { type: 'pong', id: 1 }]) expect(byParse(raw)).toEqual(bySchema(raw));
  });
});
