/** Test helper: a tool-call parse case checked whole and streamed a character at a time (the content, and each call's name and arguments). */
import { expect } from 'vitest';
import type { ToolCallFormat } from '../../common/tool-calls/tool-call-format.js';
import { parseToolCalls, ToolCallStream } from '../../common/tool-calls/tool-call-parsing.js';
import type { ToolFunction } from '../../common/tool-calls/tool-call-types.js';

export interface ParseCase {
  format: ToolCallFormat;
  text: string;
  content: string;
  /** Each call's name and parsed arguments. */
  calls: [string, unknown][];
}

export function expectParse(c: ParseCase, tools: readonly ToolFunction[] = []): void {
  const whole = parseToolCalls(c.format, c.text, tools);
  expect(whole.content).toBe(c.content);
  expect(whole.calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual(c.calls);
  const stream = new ToolCallStream(c.format, Number.POSITIVE_INFINITY, tools);
  const events = [...[...c.text].flatMap((ch) => stream.push(ch)), ...stream.end()];
  expect(
    events
      .flatMap((e) => (e.type === 'content' ? [e.text] : []))
      .join('')
      .trim(),
  ).toBe(c.content);
  expect(events.flatMap((e) => (e.type === 'call' ? [[e.call.name, JSON.parse(e.call.arguments)]] : []))).toEqual(c.calls);
}
