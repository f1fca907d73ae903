/**
 * Tool-call formats that write a call as an expression rather than JSON, as llama.cpp's parsers read them:
 * - `gemma4` (Gemma 4): `<|tool_call>call:NAME{key:value,…}<tool_call|>` once per call, a string as
 *   `<|"|>text<|"|>`, keys unquoted, numbers, booleans, lists and dicts as JSON writes them;
 * - `lfm2` (LFM2, LFM2.5): `<|tool_call_start|>[NAME(key=value, …), …]<|tool_call_end|>`, Python's
 *   keyword arguments (strings in either quote with backslash escapes, True/False/None, lists, dicts).
 * Values come out as JSON. Written by hand: the two dialects are a few rules each, and no JSON5 or
 * Python-literal library reads `<|"|>` strings or keeps the call syntax around them. Read whole
 * (`parseExpressionCalls`) and forced under a grammar (`expressionCallGrammar`). Pure: no model, no I/O.
 */
import { prefixRules } from './tool-call-grammar.js';
import { isTextParameter } from './xml-tool-calls.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';

export interface ExpressionFormat {
  /** Around all the calls (LFM2's list) or, `each`, around every call (Gemma 4's). */
  markers: [open: string, close: string];
  each: boolean;
  /** Around a call's arguments, after its name. */
  arguments: [open: string, close: string];
  /** Between a key and its value, and between two arguments (and two calls in one list). */
  assign: string;
  separator: string;
  /** Quote pairs a string may stand in. */
  quotes: readonly (readonly [string, string])[];
  /** Words that are values besides JSON's `true`, `false` and `null`. */
  words: Readonly<Record<string, unknown>>;
}

export const EXPRESSION_FORMATS = {
  gemma4: {
    markers: ['<|tool_call>call:', '<tool_call|>'],
    each: true,
    arguments: ['{', '}'],
    assign: ':',
    separator: ',',
    quotes: [
      ['<|"|>', '<|"|>'],
      ['"', '"'],
    ],
    words: {},
  },
  lfm2: {
    markers: ['<|tool_call_start|>[', ']<|tool_call_end|>'],
    each: false,
    arguments: ['(', ')'],
    assign: '=',
    separator: ', ',
    quotes: [
      ['"', '"'],
      ["'", "'"],
    ],
    words: { True: true, False: false, None: null },
  },
} as const satisfies Record<string, ExpressionFormat>;

export type ExpressionFormatName = keyof typeof EXPRESSION_FORMATS;

export const isExpressionFormat = (format: string): format is ExpressionFormatName => format in EXPRESSION_FORMATS;

class Reader {
  at = 0;
  constructor(
    readonly text: string,
    readonly format: ExpressionFormat,
  ) {}

  skipSpace(): void {
    while (/\s/.test(this.text[this.at] ?? '')) this.at++;
  }

  eat(token: string): boolean {
    this.skipSpace();
    if (!this.text.startsWith(token, this.at)) return false;
    this.at += token.length;
    return true;
  }

  expect(token: string): void {
    if (!this.eat(token)) throw new Error(`expected ${token} at ${this.at}`);
  }

  /** A name or key: up to the next delimiter (Gemma's keys are unquoted; a quoted one is read too). */
  key(stop: string): string {
    this.skipSpace();
    const quoted = this.string();
    if (quoted !== undefined) return quoted;
    const start = this.at;
    while (this.at < this.text.length && !this.text.startsWith(stop, this.at) && !/[\s,{}()[\]]/.test(this.text[this.at]!)) this.at++;
    if (this.at === start) throw new Error(`expected a name at ${start}`);
    return this.text.slice(start, this.at);
  }

  string(): string | undefined {
    for (const [open, close] of this.format.quotes) {
      if (!this.text.startsWith(open, this.at)) continue;
      let value = '';
      let at = this.at + open.length;
      while (at < this.text.length && !this.text.startsWith(close, at)) {
        const c = this.text[at]!;
        // Backslash escapes in the quotes of code (not inside Gemma's <|"|> strings, which are raw).
        if (c === '\\' && open.length === 1 && at + 1 < this.text.length) {
          const next = this.text[at + 1]!;
          value += ({ n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" } as Record<string, string>)[next] ?? next;
          at += 2;
        } else {
          value += c;
          at++;
        }
      }
      if (at >= this.text.length) throw new Error('a string does not end');
      this.at = at + close.length;
      return value;
    }
    return undefined;
  }

  value(): unknown {
    this.skipSpace();
    const quoted = this.string();
    if (quoted !== undefined) return quoted;
    if (this.eat('[')) return this.list(']', () => this.value());
    if (this.eat('{')) {
      const entries = this.list('}', () => {
        const key = this.key(':');
        this.expect(':');
        return [key, this.value()] as const;
      });
      return Object.fromEntries(entries);
    }
    const word = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[A-Za-z_]\w*)/.exec(this.text.slice(this.at))?.[0];
    if (!word) throw new Error(`expected a value at ${this.at}`);
    this.at += word.length;
    if (/^-?\d/.test(word)) return Number(word);
    if (word in this.format.words) return this.format.words[word];
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'null') return null;
    throw new Error(`unknown word ${word}`);
  }

  list<T>(close: string, item: () => T): T[] {
    const items: T[] = [];
    if (this.eat(close)) return items;
    do items.push(item());
    while (this.eat(','));
    this.expect(close);
    return items;
  }

  /** One call: its name, then its arguments. */
  call(): ParsedToolCall {
    const {
      arguments: [open, close],
      assign,
    } = this.format;
    const name = this.key(open);
    this.expect(open);
    const args = this.list(close, () => {
      const key = this.key(assign);
      this.expect(assign);
      return [key, this.value()] as const;
    });
    return { name, arguments: JSON.stringify(Object.fromEntries(args)) };
  }
}

/** The calls (none unless every call reads), and the text before the first. */
export function parseExpressionCalls(format: ExpressionFormat, text: string): { content: string; calls: ParsedToolCall[] } {
  const [open, close] = format.markers;
  const at = text.indexOf(open);
  if (at < 0) return { content: text, calls: [] };
  const reader = new Reader(text, format);
  reader.at = at;
  const calls: ParsedToolCall[] = [];
  try {
    if (format.each) {
      while (reader.eat(open)) {
        calls.push(reader.call());
        reader.expect(close);
      }
    } else {
      reader.expect(open);
      do calls.push(reader.call());
      while (reader.eat(','));
      reader.expect(close);
    }
  } catch {
    return { content: text, calls: [] };
  }
  return { content: text.slice(0, at), calls };
}

/**
 * The grammar of a forced answer: one call to one of `tools` (`parallel`: one or more), every parameter
 * in its schema's order, a string as text in the format's first quotes (an enum: one of its values), any other value by its JSON-schema
 * grammar (`valueGrammars[i][j]`, renamed apart: JSON's numbers, booleans, lists and objects read in both).
 */
export function expressionCallGrammar(
  format: ExpressionFormat,
  tools: readonly ToolFunction[],
  valueGrammars: readonly (readonly (string | null)[])[],
  parallel: boolean,
): string {
  const literal = (text: string): string => JSON.stringify(text);
  const [quoteOpen, quoteClose] = format.quotes[0]!;
  const rules: string[] = [];
  const alternatives = tools.map((tool, i) => {
    const properties = Object.entries((tool.parameters?.properties ?? {}) as Record<string, unknown>);
    const parameters = properties.map(([name, schema], j) => {
      const grammar = isTextParameter(schema) ? null : (valueGrammars[i]?.[j] ?? null);
      const values = (schema as { enum?: unknown[] }).enum;
      let value = 'expression-text';
      if (grammar !== null) {
        rules.push(prefixRules(grammar, `v${i}-${j}-`));
        value = `v${i}-${j}-root`;
      } else if (Array.isArray(values) && values.length > 0)
        value = `${literal(quoteOpen)} (${values.map((v) => literal(String(v))).join(' | ')}) ${literal(quoteClose)}`;
      return `${literal(name)} ${literal(format.assign)} ${value}`;
    });
    const body = parameters.join(` ${literal(format.separator)} `);
    return `${literal(tool.name)} ${literal(format.arguments[0])} ${body}${body ? ' ' : ''}${literal(format.arguments[1])}`;
  });
  const [open, close] = format.markers.map(literal);
  const calls = format.each ? `${open} expression-call ${close}` : 'expression-call';
  const repeated = parallel ? `${calls} (${format.each ? '' : `${literal(format.separator)} `}${calls})*` : calls;
  rules.unshift(
    `root ::= ${format.each ? repeated : `${open} ${repeated} ${close}`}`,
    `expression-call ::= ${alternatives.join(' | ')}`,
    // A string's text: no quote or backslash, so it cannot run into its end.
    `expression-text ::= ${literal(quoteOpen)} [^${quoteOpen === '"' ? '"' : '<'}\\\\]* ${literal(quoteClose)}`,
  );
  return rules.join('\n');
}
