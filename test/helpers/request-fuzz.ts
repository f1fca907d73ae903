/**
 * Test helper: reproducible hostile request bodies for the OpenAI endpoints, from a seeded PRNG
 * (mulberry32). Each body is JSON text (or text that is not JSON): a nearly valid request with a few
 * fields replaced by odd values (wrong types, huge and negative numbers, NaN-ish strings, long strings,
 * deep nesting, unknown fields), a random JSON value, or broken text. Nearly valid requests ask for 1-4
 * tokens, so the ones that pass are cheap to answer.
 */

import { seeded } from '../../bench/stats.js';

export type Random = () => number;

/** The benchmarks' seeded generator (mulberry32). */
export const seededRandom: (seed: number) => Random = seeded;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, below: number): number => Math.floor(random() * below);

const NUMBERS = [
  0,
  1,
  2,
  4,
  -1,
  -0.5,
  0.5,
  1.5,
  2.5,
  255,
  256,
  257,
  1e3,
  65_536,
  1_048_576,
  1_048_577,
  2_000_000,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  1e300,
  -1e300,
  Number.MAX_VALUE,
];
const NANISH = ['NaN', 'Infinity', '-Infinity', '1e999', '-1', '0x10', '4', 'null', 'true', ''];
const FIELDS_CHAT = ['messages', 'max_tokens', 'max_completion_tokens'];
const FIELDS_TEXT = ['prompt', 'max_tokens'];
const FIELDS_COMMON = [
  'model',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'seed',
  'repeat_penalty',
  'stop',
  'n',
  'ignore_eos',
  'return_tokens',
];
const UNKNOWN_FIELDS = ['logprobs', 'tools', 'response_format', '__proto__', 'constructor', 'x'.repeat(300), '', 'ünïcödé'];

function randomString(random: Random): string {
  switch (int(random, 8)) {
    case 0:
      return '';
    case 1:
      return 'x'.repeat(pick(random, [255, 256, 257, 300, 5000]));
    case 2:
      return pick(random, NANISH);
    case 3:
      return '\u0000\u0001\u001f\ud800 <|im_end|> </s>';
    case 4:
      return '🙂'.repeat(1 + int(random, 200));
    default:
      return pick(random, ['hi', 'the model', 'user', 'system', 'text', 'hello world']);
  }
}

/** A random JSON value, at most `depth` levels deep. */
export function randomValue(random: Random, depth = 3): unknown {
  switch (int(random, depth > 0 ? 9 : 6)) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick(random, NUMBERS);
    case 3:
      return random() < 0.5 ? pick(random, NANISH) : randomString(random);
    case 4:
      return int(random, 100) - 20;
    case 5:
      return random() * 4 - 1;
    case 6:
      return Array.from({ length: int(random, 5) }, () => randomValue(random, depth - 1));
    case 7:
      return Object.fromEntries(
        Array.from({ length: int(random, 4) }, () => [pick(random, [...FIELDS_COMMON, 'role', 'content', 'type', 'text']), randomValue(random, depth - 1)]),
      );
    default:
      return Array.from({ length: 1 + int(random, 20) }, () => int(random, 600));
  }
}

/** A plausible value for a field: often right, often subtly wrong. */
function fieldValue(random: Random, field: string): unknown {
  if (random() < 0.35) return randomValue(random);
  switch (field) {
    case 'messages':
      return Array.from({ length: int(random, 3) }, () => ({
        role: pick(random, ['user', 'system', 'assistant', 'developer', 'tool', 'wizard', 5, null]),
        content: pick(random, ['hi', null, [{ type: 'text', text: 'hi' }], [{ type: 'image_url', image_url: {} }], 5, randomString(random)]),
      }));
    case 'prompt':
      return pick(random, ['the', ['the'], ['a', 'b'], [1, 2, 3], [99_999_999], [-1], [1.5], [], '', randomString(random)]);
    case 'stop':
      return pick(random, ['\n', '', 'x'.repeat(300), Array.from({ length: int(random, 20) }, () => pick(random, ['a', '.', '', 'x'.repeat(257)])), 5, null]);
    case 'stream_options':
      return pick(random, [{ include_usage: true }, { include_usage: 'yes' }, null, []]);
    case 'model':
      return pick(random, ['tiny', '', 'gpt-4', null, 5]);
    default:
      return pick(random, [...NUMBERS, ...NANISH, null, true, false]);
  }
}

export interface FuzzBody {
  path: '/v1/chat/completions' | '/v1/completions';
  text: string;
}

/** Deeply nested arrays or objects, as text (a JSON parser's and a validator's stress). */
const deepText = (random: Random): string => {
  const depth = pick(random, [100, 5_000, 50_000]);
  return random() < 0.5 ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
};

/** The `i`th body of a run (`random` is the run's PRNG). */
export function fuzzBody(random: Random): FuzzBody {
  const path = random() < 0.5 ? '/v1/chat/completions' : '/v1/completions';
  const roll = random();
  if (roll < 0.08)
    return {
      path,
      text: pick(random, [
        '',
        ' ',
        '{',
        '{"messages": [',
        'null',
        '[]',
        '"text"',
        '42',
        'NaN',
        '{"a":1,}',
        '\u0000',
        '{"messages":[{"role":"user","content":"hi"}]}x',
      ]),
    };
  if (roll < 0.13) return { path, text: deepText(random) };
  if (roll < 0.25) return { path, text: JSON.stringify(randomValue(random, 4)) };
  const body: Record<string, unknown> =
    path === '/v1/chat/completions'
      ? { messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 + int(random, 4) }
      : { prompt: 'the model', max_tokens: 1 + int(random, 4) };
  const fields = [...(path === '/v1/chat/completions' ? FIELDS_CHAT : FIELDS_TEXT), ...FIELDS_COMMON];
  for (let m = int(random, 4); m > 0; m--) {
    const field = random() < 0.1 ? pick(random, UNKNOWN_FIELDS) : pick(random, fields);
    if (random() < 0.1) delete body[field];
    else body[field] = fieldValue(random, field);
  }
  return { path, text: JSON.stringify(body) };
}
