/** The JSON-schema subset check (common/json-schema-subset.ts): what node-llama-cpp's grammar can take, in its terms, and refusals by keyword. */
import { z } from 'zod';
import { zodResponseFormat } from 'openai/helpers/zod';
import { describe, expect, it } from 'vitest';
import { checkJsonSchema } from '../../common/json-schema-subset.js';

const ok = (schema: unknown) => {
  const result = checkJsonSchema(schema);
  if (!result.ok) throw new Error(result.message);
  return result.schema;
};
const refused = (schema: unknown) => {
  const result = checkJsonSchema(schema);
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.schema)}`);
  return result;
};

describe('checkJsonSchema', () => {
  it("takes what the openai client's zodResponseFormat writes, in node-llama-cpp's terms", () => {
    const schema = z.object({
      name: z.string().max(12),
      age: z.number().int(),
      tags: z.array(z.enum(['a', 'b'])).max(3),
      nick: z.string().max(5).nullable(),
      kind: z.union([z.literal('x'), z.number()]),
      inner: z.object({ on: z.boolean() }).nullable(),
    });
    const format = zodResponseFormat(schema, 'thing');
    expect(ok(format.json_schema.schema)).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 12 },
        age: { type: 'integer' },
        tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 3 },
        nick: { oneOf: [{ type: 'string', maxLength: 5 }, { type: 'null' }] },
        kind: { oneOf: [{ const: 'x' }, { type: 'number' }] },
        inner: { oneOf: [{ type: 'object', properties: { on: { type: 'boolean' } }, additionalProperties: false }, { type: 'null' }] },
      },
      additionalProperties: false,
    });
  });

  it('rewrites definitions and their references to $defs, and spells out any value', () => {
    expect(ok({ definitions: { Leaf: { type: 'string' } }, type: 'array', items: { $ref: '#/definitions/Leaf' } })).toEqual({
      $defs: { Leaf: { type: 'string' } },
      type: 'array',
      items: { $ref: '#/$defs/Leaf' },
    });
    expect(ok({})).toMatchObject({ oneOf: expect.arrayContaining([{ type: 'object', additionalProperties: true }]) });
    expect(ok(true)).toEqual(ok({ title: 'anything' }));
    expect(ok({ type: ['string', 'null'] })).toEqual({ type: ['string', 'null'] });
    expect(ok({ type: ['object', 'null'], properties: { a: { type: 'null' } } })).toEqual({
      oneOf: [{ type: 'object', properties: { a: { type: 'null' } } }, { type: 'null' }],
    });
    expect(ok({ properties: { a: { type: 'boolean' } } })).toEqual({ type: 'object', properties: { a: { type: 'boolean' } } });
  });

  it.each([
    [{ type: 'string', pattern: '^a+$' }, 'pattern', '#', 'regular expressions'],
    [{ type: 'object', properties: { n: { type: 'number', minimum: 0 } } }, 'minimum', '#/properties/n', 'numeric bounds'],
    [{ type: 'integer', multipleOf: 2 }, 'multipleOf', '#', 'numeric bounds'],
    [{ allOf: [{ type: 'string' }] }, 'allOf', '#', 'intersections'],
    [{ type: 'string', format: 'email' }, 'format', '#', '"email"'],
    [{ not: { type: 'string' } }, 'not', '#', 'does not know it'],
    [{ type: 'array', items: [{ type: 'string' }] }, 'items', '#', 'prefixItems'],
    [{ type: 'array', uniqueItems: true }, 'uniqueItems', '#', 'does not know it'],
    [{ $ref: '#' }, '$ref', '#', 'only references to definitions'],
    [{ $ref: '#/$defs/Missing' }, '$ref', '#', 'names no definition'],
    [{ anyOf: [{ type: 'string' }], type: 'string' }, 'type', '#', 'takes no other keywords'],
    [{ type: 'object', properties: { a: { type: 'string' } }, required: ['b'] }, 'required', '#', '"b"'],
    [{ type: 'string', properties: {} }, 'properties', '#', 'does not apply to type string'],
    [{ type: 'date' }, 'type', '#', 'a type is one of'],
    [{ const: { a: 1 } }, 'const', '#', 'constant'],
    [{ type: ['string', 'null'], minLength: 1, pattern: 'x' }, 'pattern', '#', 'regular expressions'],
  ])('refuses %j naming %s at %s', (schema, keyword, at, why) => {
    const result = refused(schema);
    expect(result.keyword).toBe(keyword);
    expect(result.message).toContain(`"${keyword}" at ${at} `);
    expect(result.message).toContain(why);
  });

  it('refuses a schema nested deeper than it takes', () => {
    let schema: unknown = { type: 'string' };
    for (let i = 0; i < 80; i++) schema = { type: 'array', items: schema };
    expect(refused(schema).message).toContain('nested deeper');
  });
});
