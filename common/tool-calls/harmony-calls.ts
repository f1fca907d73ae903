/**
 * gpt-oss's tool calls in its harmony channels, as llama.cpp's `common_chat_params_init_gpt_oss` reads
 * them: a message to `functions.NAME` (the recipient in the role header, ` to=functions.NAME<|channel|>…`,
 * or in the channel, `<|channel|>commentary to=functions.NAME`), an optional `<|constrain|>json`, then
 * `<|message|>` and the arguments' JSON (the message ends with `<|call|>`, an end of generation). A
 * message to a builtin recipient (`container.exec`, `python`) is not a function call: it is dropped, as
 * llama.cpp drops it. A forced call is one, written in the channel form. Pure: no model, no I/O.
 */
import { parseJsonOr } from '../parse-json.js';
import type { ParsedToolCall, ToolFunction } from './tool-call-types.js';
import { prefixRules } from './tool-call-grammar.js';

const MESSAGE =
  /(?:<\|start\|>assistant)?((?:\s*to=[^\s<]+)?)\s*<\|channel\|>(analysis|commentary|final)((?:\s+to=[^\s<]+)?)(?:\s*<\|constrain\|>\s*\w+)?\s*<\|message\|>([\s\S]*?)(?=<\|start\|>|<\|end\|>|<\|call\|>|$)/g;

/** The function calls among the messages of `text` (recipients `functions.*`), and the text before the first message to a recipient. */
export function parseHarmonyCalls(text: string): { content: string; calls: ParsedToolCall[] } {
  const calls: ParsedToolCall[] = [];
  let first = -1;
  for (const match of text.matchAll(MESSAGE)) {
    const recipient = (match[1] || match[3] || '').trim().replace(/^to=/, '');
    if (!recipient) continue;
    if (first < 0) first = match.index;
    if (!recipient.startsWith('functions.')) continue;
    const args = parseJsonOr(match[4]!.trim(), undefined);
    if (typeof args !== 'object' || args === null || Array.isArray(args)) continue;
    calls.push({ name: recipient.slice('functions.'.length), arguments: JSON.stringify(args) });
  }
  return first < 0 ? { content: text, calls: [] } : { content: text.slice(0, first), calls };
}

/**
 * The grammar of a forced call (the prompt ends with `<|start|>assistant`): one commentary message to one
 * of `tools`, its arguments by their JSON-schema grammar (`argumentGrammars[i]`, renamed apart). One call:
 * a harmony call message ends with `<|call|>`, an end of generation.
 */
export function harmonyCallGrammar(tools: readonly ToolFunction[], argumentGrammars: readonly string[]): string {
  const rules: string[] = [];
  const alternatives = tools.map((tool, i) => {
    rules.push(prefixRules(argumentGrammars[i]!, `a${i}-`));
    return `"<|channel|>commentary to=functions.${tool.name} <|constrain|>json<|message|>" a${i}-root`;
  });
  return ['root ::= harmony-call', `harmony-call ::= ${alternatives.join(' | ')}`, ...rules].join('\n');
}
