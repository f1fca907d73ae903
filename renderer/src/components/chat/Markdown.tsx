/** Renders an answer's Markdown as React elements (parsed by markdown-parser.ts): no HTML from the model reaches the page. */
import { parseMarkdown, type Inline } from './markdown-parser.js';

function Spans({ inline }: { inline: Inline[] }) {
  return (
    <>
      {inline.map((span, i) =>
        span.kind === 'code' ? (
          <code key={i}>{span.text}</code>
        ) : span.kind === 'bold' ? (
          <strong key={i}>{span.text}</strong>
        ) : span.kind === 'italic' ? (
          <em key={i}>{span.text}</em>
        ) : (
          <span key={i}>{span.text}</span>
        ),
      )}
    </>
  );
}

export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      {parseMarkdown(text).map((block, i) => {
        switch (block.kind) {
          case 'code':
            return (
              <pre key={i} data-language={block.language}>
                <code>{block.text}</code>
              </pre>
            );
          case 'heading':
            return (
              <p key={i} className={`heading h${block.level}`}>
                <Spans inline={block.inline} />
              </p>
            );
          case 'list': {
            const items = block.items.map((item, j) => (
              <li key={j}>
                <Spans inline={item} />
              </li>
            ));
            return block.ordered ? <ol key={i}>{items}</ol> : <ul key={i}>{items}</ul>;
          }
          case 'paragraph':
            return (
              <p key={i}>
                <Spans inline={block.inline} />
              </p>
            );
        }
      })}
    </div>
  );
}
