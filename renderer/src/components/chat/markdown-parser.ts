/**
 * A small Markdown reader for answers, safe by construction: it yields blocks and inline spans that the
 * view renders as React elements (never HTML strings). Fenced code, headings, lists, paragraphs; inline
 * code, bold, italic.
 */
export type Inline = { kind: 'text' | 'code' | 'bold' | 'italic'; text: string };
export type Block =
  | { kind: 'code'; language: string; text: string }
  | { kind: 'heading'; level: number; inline: Inline[] }
  | { kind: 'list'; ordered: boolean; items: Inline[][] }
  | { kind: 'paragraph'; inline: Inline[] };

const INLINE = /(`[^`\n]+`|\*\*[^*\n]+\*\*|\*[^*\n]+\*|_[^_\n]+_)/;

export function parseInline(text: string): Inline[] {
  const spans: Inline[] = [];
  for (const part of text.split(INLINE)) {
    if (!part) continue;
    if (part.startsWith('`') && part.endsWith('`') && part.length > 2) spans.push({ kind: 'code', text: part.slice(1, -1) });
    else if (part.startsWith('**') && part.endsWith('**') && part.length > 4) spans.push({ kind: 'bold', text: part.slice(2, -2) });
    else if ((part.startsWith('*') && part.endsWith('*')) || (part.startsWith('_') && part.endsWith('_')))
      spans.push({ kind: 'italic', text: part.slice(1, -1) });
    else spans.push({ kind: 'text', text: part });
  }
  return spans;
}

export function parseMarkdown(source: string): Block[] {
  const blocks: Block[] = [];
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  let paragraph: string[] = [];
  const flush = (): void => {
    if (paragraph.length) blocks.push({ kind: 'paragraph', inline: parseInline(paragraph.join(' ')) });
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) code.push(lines[i]!);
      blocks.push({ kind: 'code', language: fence[1] ?? '', text: code.join('\n') });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      blocks.push({ kind: 'heading', level: heading[1]!.length, inline: parseInline(heading[2]!) });
      continue;
    }
    const item = /^\s*([-*]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]!);
      const last = blocks.at(-1);
      if (last?.kind === 'list' && last.ordered === ordered) last.items.push(parseInline(item[2]!));
      else blocks.push({ kind: 'list', ordered, items: [parseInline(item[2]!)] });
      continue;
    }
    if (line.trim() === '') flush();
    else paragraph.push(line.trim());
  }
  flush();
  return blocks;
}
