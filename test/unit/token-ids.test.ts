import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { areTokenIds, isTokenId, tokenIdsSchema } from '../../common/token-ids.js';

const issues = (schema: z.ZodType, value: unknown): [string, string][] => {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((issue) => [issue.path.join('.'), issue.message]);
};

describe('token ids at a process boundary', () => {
  const prompt = z.object({ tokens: tokenIdsSchema({ min: 1, max: 4 }) });

  it('take a list of whole numbers ≥ 0 within its length, as it is', () => {
    const ids = [0, 1, 2 ** 31, Number.MAX_SAFE_INTEGER];
    expect(prompt.parse({ tokens: ids }).tokens).toEqual(ids);
    expect(tokenIdsSchema().parse([])).toEqual([]);
  });

  it('name the first id that is not one at its own index', () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expect(issues(prompt, { tokens: [3, bad, -2] })).toEqual([['tokens.1', expect.stringMatching(/^a token id is a whole number ≥ 0 \(got .+\)$/)]]);
    }
    // Not a number at all: a type mismatch, as zod's array of numbers reports it.
    for (const bad of ['7', null, [1], undefined]) {
      expect(prompt.safeParse({ tokens: [3, bad, -2] }).error?.issues).toMatchObject([{ code: 'invalid_type', expected: 'number', path: ['tokens', 1] }]);
    }
  });

  it('the hand checks of per-token messages agree with the schema, holes included', () => {
    for (const id of [0, 7, Number.MAX_SAFE_INTEGER]) expect(isTokenId(id)).toBe(true);
    for (const id of [-1, 1.5, Number.NaN, 2 ** 53, '7', null, undefined]) expect(isTokenId(id)).toBe(false);
    expect(areTokenIds([1, 2, 3])).toBe(true);
    expect(areTokenIds([1, -2, 3])).toBe(false);
    expect(areTokenIds([1, , 3])).toBe(false);
    expect(tokenIdsSchema().safeParse([1, , 3]).success).toBe(false);
  });

  it('refuse what is not a list, and a list too short or too long, saying so', () => {
    expect(prompt.safeParse({ tokens: 'hello' }).error?.issues).toMatchObject([{ code: 'invalid_type', expected: 'array', path: ['tokens'] }]);
    expect(prompt.safeParse({}).error?.issues).toMatchObject([{ code: 'invalid_type', expected: 'array', path: ['tokens'] }]);
    expect(issues(prompt, { tokens: [] })).toEqual([['tokens', 'at least 1 token id (got 0)']]);
    expect(issues(prompt, { tokens: [1, 2, 3, 4, 5] })).toEqual([['tokens', 'at most 4 token ids (got 5)']]);
  });

  it('in a union, leave a string to its own option and a non-list to the union’s message', () => {
    const either = z.union([z.string(), tokenIdsSchema({ min: 1 })], { error: 'a string or token ids' });
    expect(either.parse('text')).toBe('text');
    expect(either.parse([5])).toEqual([5]);
    expect(issues(either, { text: 'a' })).toEqual([['', 'a string or token ids']]);
    expect(issues(either, [5, -5])).toEqual([['1', 'a token id is a whole number ≥ 0 (got -5)']]);
    // A list of other things is not a list of ids: a type mismatch at its first element, as zod's own array of
    // numbers says it, so the words of a refusal pass over this option to the one that had the value's shape.
    const strings = z.union([z.array(z.string()).length(1), tokenIdsSchema({ min: 1 })]);
    expect(strings.safeParse(['a', 'b']).error?.issues).toMatchObject([
      { code: 'invalid_union', errors: [[{ code: 'too_big' }], [{ code: 'invalid_type', expected: 'number', path: [0] }]] },
    ]);
  });
});
