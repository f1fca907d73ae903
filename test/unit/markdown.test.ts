/** The chat's Markdown reader: blocks and inline spans, never HTML (pure logic). */
import { describe, expect, it } from 'vitest';
import { parseInline, parseMarkdown } from '../../renderer/src/components/chat/markdown-parser.js';

describe('markdown', () => {
  it('reads fenced code, headings, lists and paragraphs', () => {
    const blocks = parseMarkdown('# Title\nsome *text*\nmore\n\n- one\n- `two`\n1. first\n```ts\nconst a = 1;\n```\n');
    expect(blocks).toEqual([
      { kind: 'heading', level: 1, inline: [{ kind: 'text', text: 'Title' }] },
      {
        kind: 'paragraph',
        inline: [
          { kind: 'text', text: 'some ' },
          { kind: 'italic', text: 'text' },
          { kind: 'text', text: ' more' },
        ],
      },
      { kind: 'list', ordered: false, items: [[{ kind: 'text', text: 'one' }], [{ kind: 'code', text: 'two' }]] },
      { kind: 'list', ordered: true, items: [[{ kind: 'text', text: 'first' }]] },
      { kind: 'code', language: 'ts', text: 'const a = 1;' },
    ]);
  });

  it('keeps HTML as text, and an unclosed fence as code to the end', () => {
    expect(parseInline('<img src=x onerror=alert(1)> **bold**')).toEqual([
      { kind: 'text', text: '<img src=x onerror=alert(1)> ' },
      { kind: 'bold', text: 'bold' },
    ]);
    expect(parseMarkdown('```\nstreaming…')).toEqual([{ kind: 'code', language: '', text: 'streaming…' }]);
  });
});
