/**
 * Zod's issues in words for people: `field: problem (got value)` — the field as a path
 * (`messages[2].content`), what is wrong with the value, and the limit it broke. `inWords` is a zod
 * error map (pass it as `safeParse(input, { error: inWords })`); a schema's own message still wins, so
 * a field can say more (`a stop string is at most 256 characters`). Nobody is ever shown zod's list of
 * issues as JSON.
 */
import type { z } from 'zod';

type RawIssue = z.core.$ZodRawIssue;

/** `messages[2].content`; '' for the root. */
export function fieldName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)), '');
}

export const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** A value described in a few words, never dumped: `"abc"`, `2000000`, `a string of 300 characters`, `an object`. */
export function valueInWords(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length} characters`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `an array of ${plural(value.length, 'item')}`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
  undefined: 'nothing',
};
const typeInWords = (expected: string): string => TYPE_WORDS[expected] ?? `a ${expected}`;
const PLURAL_TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'strings',
  number: 'numbers',
  int: 'whole numbers',
  boolean: 'booleans',
  object: 'objects',
  array: 'arrays',
};

const joinOr = (words: readonly string[]): string => (words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)!}`);

const sizeOf = (value: unknown): number | null => (typeof value === 'string' || Array.isArray(value) ? value.length : null);

function limitInWords(issue: Extract<RawIssue, { code: 'too_big' | 'too_small' }>, bound: 'at most' | 'at least'): string {
  const limit = issue.code === 'too_big' ? issue.maximum : issue.minimum;
  const exclusive = issue.inclusive === false;
  const comparison = issue.exact ? 'exactly' : exclusive ? (bound === 'at most' ? 'less than' : 'more than') : bound;
  const size = sizeOf(issue.input);
  if (issue.origin === 'string') {
    if (bound === 'at least' && Number(limit) === 1 && size === 0) return 'must not be empty';
    return `${comparison} ${plural(Number(limit), 'character')} (got ${size ?? valueInWords(issue.input)})`;
  }
  if (issue.origin === 'array' || issue.origin === 'set') return `${comparison} ${plural(Number(limit), 'item')} (got ${size ?? valueInWords(issue.input)})`;
  return `${comparison} ${String(limit)} (got ${valueInWords(issue.input)})`;
}

/**
 * What a union's branch expected, from its first issue: `a string`, `an array of strings`; null for a
 * branch that had the value's shape and failed deeper (its own issue says more).
 */
function branchShape(issues: readonly z.core.$ZodIssue[]): string | null {
  const first = issues[0];
  if (first?.code === 'invalid_value' && first.path.length === 0) return first.values.map((v) => JSON.stringify(v)).join(' or ');
  if (first?.code !== 'invalid_type') return null;
  if (first.path.length === 0) return typeInWords(first.expected);
  if (first.path.length === 1 && typeof first.path[0] === 'number') return `an array of ${PLURAL_TYPE_WORDS[first.expected] ?? first.expected}`;
  return null;
}

/** The issue to report: for a union, the first issue of a branch that had the value's shape, under the union's path. */
function reported(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const matched = issue.errors.find((branch) => branchShape(branch) === null)?.[0];
  return matched ? reported({ ...matched, path: [...issue.path, ...matched.path] }) : issue;
}

/**
 * An error map for a union whose branches are better named together (`a string or an array of at most
 * 16 strings`): its message when the value has none of their shapes.
 */
export const expectedOneOf =
  (shapes: string) =>
  (issue: RawIssue): string | undefined =>
    issue.code === 'invalid_union' ? `expected ${shapes}; got ${valueInWords(issue.input)}` : undefined;

/** The problem of one issue in words (the field is named by the caller, from the issue's path). */
export const inWords: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `is required (${typeInWords(issue.expected)})`;
      return `expected ${typeInWords(issue.expected)}, got ${valueInWords(issue.input)}`;
    case 'too_big':
      return limitInWords(issue, 'at most');
    case 'too_small':
      return limitInWords(issue, 'at least');
    case 'invalid_value': {
      const values = issue.values.map((v) => JSON.stringify(v));
      return `${values.length === 1 ? `must be ${values[0]!}` : `must be one of ${values.join(', ')}`} (got ${valueInWords(issue.input)})`;
    }
    case 'invalid_union':
      return `expected ${joinOr([...new Set(issue.errors.map((branch) => branchShape(branch) ?? 'another shape'))])}, got ${valueInWords(issue.input)}`;
    case 'unrecognized_keys':
      return `unknown ${issue.keys.length === 1 ? 'field' : 'fields'} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_format':
      return `must be ${issue.format === 'regex' ? 'in the expected form' : `a ${issue.format}`} (got ${valueInWords(issue.input)})`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)} (got ${valueInWords(issue.input)})`;
    default:
      return `is not valid (got ${valueInWords(issue.input)})`;
  }
};

/** `field: problem` for the first issue of a failed parse made with `inWords` (`what` names the root). */
export function firstIssueInWords(error: z.ZodError, what = 'the value'): { field: string | null; message: string } {
  const issue = reported(error.issues[0]!);
  const field = fieldName(issue.path);
  return { field: field || null, message: `${field || what}: ${issue.message}` };
}
