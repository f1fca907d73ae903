/**
 * The part of JSON Schema that node-llama-cpp's JSON-schema grammar can express, checked before a schema
 * is converted: a keyword outside it is refused by name (with where it is) rather than dropped, since
 * the converter would otherwise ignore it and the output would not hold to the schema. What passes comes
 * back in node-llama-cpp's own terms (its GbnfJsonSchema): `anyOf` as `oneOf`, `definitions` and
 * `#/definitions/…` references as `$defs`, a list of types holding `object` or `array` as a `oneOf`, the
 * type a schema without one implies, annotations (`title`, `description`, …) dropped, and "any value"
 * (`{}`, `true`) spelled out. Pure: no node-llama-cpp here (core checks, the tokenizer child converts).
 */

export type JsonSchemaCheck =
  { readonly ok: true; readonly schema: Record<string, unknown> } | { readonly ok: false; readonly keyword: string; readonly message: string };

/** Keywords that say nothing about which values are valid: dropped. */
const ANNOTATIONS = new Set(['title', 'description', '$schema', '$id', '$comment', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly']);
const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const TYPES = new Set([...PRIMITIVE_TYPES, 'object', 'array']);
const FORMATS = new Set(['date-time', 'time', 'date']);
/** Keywords each type takes (beside type, const, enum and $defs). */
const KEYWORDS_OF: Record<string, ReadonlySet<string>> = {
  object: new Set(['properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties']),
  array: new Set(['items', 'prefixItems', 'minItems', 'maxItems']),
  string: new Set(['minLength', 'maxLength', 'format']),
  number: new Set(['minimum', 'maximum']),
  integer: new Set(['minimum', 'maximum']),
};
/** The type a schema without `type` implies by its keywords. */
const IMPLIED_TYPE: Record<string, string> = {
  properties: 'object',
  required: 'object',
  additionalProperties: 'object',
  minProperties: 'object',
  maxProperties: 'object',
  items: 'array',
  prefixItems: 'array',
  minItems: 'array',
  maxItems: 'array',
  minLength: 'string',
  maxLength: 'string',
  format: 'string',
};
/** How deep a schema may nest. */
const MAX_DEPTH = 64;
/** What "any value" is in node-llama-cpp's terms. */
const ANY_VALUE = { oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }] };

/** Why node-llama-cpp's grammar cannot take a keyword, for the refusal. */
const WHY: Record<string, string> = {
  pattern: 'regular expressions cannot be expressed',
  minimum: 'numeric bounds cannot be expressed',
  maximum: 'numeric bounds cannot be expressed',
  exclusiveMinimum: 'numeric bounds cannot be expressed',
  exclusiveMaximum: 'numeric bounds cannot be expressed',
  multipleOf: 'numeric bounds cannot be expressed',
  allOf: 'intersections of schemas cannot be expressed',
};

class Refusal extends Error {
  constructor(
    readonly keyword: string,
    message: string,
  ) {
    super(message);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isPrimitive = (value: unknown): boolean => value === null || ['string', 'number', 'boolean'].includes(typeof value);
const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * `schema` checked against the subset and put in node-llama-cpp's terms; or the first keyword it cannot
 * express, named with its place (`#/properties/email`) and why.
 */
export function checkJsonSchema(schema: unknown): JsonSchemaCheck {
  try {
    const defs = new Set<string>();
    collectDefs(schema, defs, 0);
    return { ok: true, schema: normalize(schema, '#', defs, 0) };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, keyword: error.keyword, message: error.message };
    throw error;
  }
}

const refuse = (keyword: string, at: string, why: string): never => {
  throw new Refusal(keyword, `"${keyword}" at ${at} is not supported: ${why}`);
};

/** Every definition's name (`$defs` and `definitions` anywhere), so references can be checked. */
function collectDefs(schema: unknown, into: Set<string>, depth: number): void {
  if (depth > MAX_DEPTH || (!isRecord(schema) && !Array.isArray(schema))) return;
  for (const [key, value] of Object.entries(schema)) {
    if ((key === '$defs' || key === 'definitions') && isRecord(value)) for (const name of Object.keys(value)) into.add(name);
    collectDefs(value, into, depth + 1);
  }
}

function normalize(schema: unknown, at: string, defs: ReadonlySet<string>, depth: number): Record<string, unknown> {
  if (depth > MAX_DEPTH) refuse('$ref', at, `schemas nested deeper than ${MAX_DEPTH} levels`);
  if (schema === true) return ANY_VALUE;
  if (!isRecord(schema)) return refuse('schema', at, 'a schema is an object (or true)');
  const entries = Object.entries(schema).filter(([key]) => !ANNOTATIONS.has(key));
  const own = Object.fromEntries(entries);
  const out: Record<string, unknown> = {};
  const sub = (value: unknown, where: string): Record<string, unknown> => normalize(value, `${at}/${where}`, defs, depth + 1);

  const definitions = { ...(isRecord(own.definitions) ? own.definitions : {}), ...(isRecord(own.$defs) ? own.$defs : {}) };
  if (('definitions' in own && !isRecord(own.definitions)) || ('$defs' in own && !isRecord(own.$defs)))
    refuse('$defs', at, 'definitions are an object of schemas');
  if (Object.keys(definitions).length > 0) out.$defs = Object.fromEntries(Object.entries(definitions).map(([name, def]) => [name, sub(def, `$defs/${name}`)]));
  delete own.definitions;
  delete own.$defs;
  const rest = Object.keys(own);

  const alone = (keyword: string): void => {
    const others = rest.filter((key) => key !== keyword);
    if (others.length > 0) refuse(others[0]!, at, `"${keyword}" takes no other keywords beside it (the grammar would ignore them)`);
  };
  if ('$ref' in own) {
    alone('$ref');
    const ref = own.$ref;
    const name = typeof ref === 'string' ? /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref)?.[1] : undefined;
    if (name === undefined) refuse('$ref', at, `only references to definitions ("#/$defs/Name") can be expressed, not ${JSON.stringify(ref)}`);
    if (!defs.has(name!)) refuse('$ref', at, `${JSON.stringify(ref)} names no definition in the schema`);
    return { ...out, $ref: `#/$defs/${name}` };
  }
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    if (!(keyword in own)) continue;
    alone(keyword);
    const options = own[keyword];
    if (!Array.isArray(options) || options.length === 0) refuse(keyword, at, 'it is a non-empty array of schemas');
    return { ...out, oneOf: (options as unknown[]).map((option, i) => sub(option, `${keyword}/${i}`)) };
  }
  if ('const' in own) {
    if (!isPrimitive(own.const)) refuse('const', at, 'only a string, number, boolean or null constant can be expressed');
    return { ...out, const: own.const };
  }
  if ('enum' in own) {
    if (!Array.isArray(own.enum) || own.enum.length === 0 || !own.enum.every(isPrimitive))
      refuse('enum', at, 'only a non-empty list of strings, numbers, booleans or nulls can be expressed');
    return { ...out, enum: own.enum };
  }

  let type = own.type;
  if (type === undefined) {
    const implied = new Set(rest.map((key) => IMPLIED_TYPE[key]).filter((t) => t !== undefined));
    if (implied.size > 1)
      refuse(
        rest.find((key) => IMPLIED_TYPE[key] !== undefined)!,
        at,
        'a schema without "type" whose keywords belong to several types',
      );
    if (implied.size === 0) {
      const unknown = rest[0];
      if (unknown !== undefined) refuse(unknown, at, WHY[unknown] ?? "node-llama-cpp's JSON-schema grammar does not know it");
      return Object.keys(out).length > 0 ? { ...out, ...ANY_VALUE } : ANY_VALUE;
    }
    type = [...implied][0];
  }
  const types = Array.isArray(type) ? type : [type];
  if (types.length === 0 || !types.every((t) => typeof t === 'string' && TYPES.has(t)))
    refuse('type', at, `a type is one of ${[...TYPES].join(', ')} (or a list of them), not ${JSON.stringify(type)}`);
  const allowed = new Set(types.flatMap((t) => [...(KEYWORDS_OF[t as string] ?? [])]));
  for (const key of rest) {
    if (key === 'type') continue;
    if (!allowed.has(key))
      refuse(
        key,
        at,
        WHY[key] ?? (IMPLIED_TYPE[key] ? `it does not apply to type ${types.join(' | ')}` : "node-llama-cpp's JSON-schema grammar does not know it"),
      );
  }
  const typeKeywords = rest.filter((key) => key !== 'type' && key !== 'minimum' && key !== 'maximum');
  if (types.length > 1 && (types.some((t) => !PRIMITIVE_TYPES.has(t as string)) || typeKeywords.length > 0)) {
    // node-llama-cpp takes a bare list of primitive types only: otherwise the list is a oneOf of one schema per type, each with its own keywords.
    const pick = (t: string) => Object.fromEntries(Object.entries(own).filter(([key]) => KEYWORDS_OF[t]?.has(key)));
    return { ...out, oneOf: types.map((t) => sub({ ...pick(t as string), type: t }, `type/${String(t)}`)) };
  }
  out.type = type;
  switch (types.length === 1 ? types[0] : 'primitives') {
    case 'object': {
      if ('properties' in own) {
        if (!isRecord(own.properties)) refuse('properties', at, 'properties are an object of schemas');
        out.properties = Object.fromEntries(
          Object.entries(own.properties as Record<string, unknown>).map(([name, property]) => [name, sub(property, `properties/${name}`)]),
        );
      }
      if ('required' in own) {
        if (!Array.isArray(own.required) || !own.required.every((name) => typeof name === 'string')) refuse('required', at, 'it is a list of property names');
        const missing = (own.required as string[]).find((name) => !isRecord(own.properties) || !(name in own.properties));
        // The grammar writes every listed property; a required one that is not listed could only come as an additional property.
        if (missing !== undefined) refuse('required', at, `the required property ${JSON.stringify(missing)} is not among "properties"`);
      }
      if ('additionalProperties' in own) {
        const extra = own.additionalProperties;
        out.additionalProperties = typeof extra === 'boolean' ? extra : sub(extra, 'additionalProperties');
      }
      copyCounts(own, out, ['minProperties', 'maxProperties'], at);
      break;
    }
    case 'array': {
      if ('items' in own) {
        if (Array.isArray(own.items)) refuse('items', at, 'a list of item schemas (draft 4 tuples) cannot be expressed; use "prefixItems"');
        out.items = sub(own.items, 'items');
      }
      if ('prefixItems' in own) {
        if (!Array.isArray(own.prefixItems)) refuse('prefixItems', at, 'it is a list of schemas');
        out.prefixItems = (own.prefixItems as unknown[]).map((item, i) => sub(item, `prefixItems/${i}`));
      }
      copyCounts(own, out, ['minItems', 'maxItems'], at);
      break;
    }
    case 'string': {
      if ('format' in own) {
        if (typeof own.format !== 'string' || !FORMATS.has(own.format))
          refuse('format', at, `of the formats only ${[...FORMATS].join(', ')} can be expressed, not ${JSON.stringify(own.format)}`);
        if ('minLength' in own || 'maxLength' in own) refuse('format', at, 'a format with minLength or maxLength cannot be expressed');
        out.format = own.format;
      }
      copyCounts(own, out, ['minLength', 'maxLength'], at);
      break;
    }
    default:
      checkNumericBounds(own, at);
  }
  return out;
}

function copyCounts(own: Record<string, unknown>, out: Record<string, unknown>, keywords: readonly string[], at: string): void {
  for (const keyword of keywords) {
    if (!(keyword in own)) continue;
    if (!isCount(own[keyword])) refuse(keyword, at, 'it is a whole number ≥ 0');
    out[keyword] = own[keyword];
  }
}

/**
 * `minimum`/`maximum` only as the safe-integer range (what zod's `.int()` writes): the grammar writes at
 * most 16 digits either way, so that range holds nearly always; any other bound is refused.
 */
function checkNumericBounds(own: Record<string, unknown>, at: string): void {
  if ('minimum' in own && own.minimum !== -Number.MAX_SAFE_INTEGER) refuse('minimum', at, WHY.minimum!);
  if ('maximum' in own && own.maximum !== Number.MAX_SAFE_INTEGER) refuse('maximum', at, WHY.maximum!);
}
