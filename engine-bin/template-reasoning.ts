/**
 * Whether a chat template thinks, and the tags around its thinking, found as llama.cpp's differential
 * autoparser finds them (`analyze_reasoning` in common/chat-diff-analyzer.cpp): render the template with
 * and without an assistant's `reasoning_content`, with `enable_thinking` off and on, and with and without a
 * tool call, and read the markers (`<…>` or `[…]`) around what changed. Ported by hand because llama.cpp
 * keeps it in C++; what it decides sets `enable_thinking`'s default (llama-server's) and the tags core
 * separates `reasoning_content` by.
 */
import { escapeRegExp as escape } from '../common/regexp-text.js';

/** A probe render: the template on raw messages (null when it throws), as llama.cpp's `apply_template` renders. */
export type ProbeRender = (
  messages: Record<string, unknown>[],
  options: { addGenerationPrompt: boolean; enableThinking: boolean; tools?: Record<string, unknown>[] },
) => string | null;

/** The tags a thinking template puts around its reasoning (either may be empty: a template that only closes it). */
export interface ThinkingTags {
  start: string;
  end: string;
}

const USER_MSG = 'U_USER_MSG Hello END_U';
const ASSISTANT_MSG = 'A_ASST_MSG I can help END_A';
const THINKING_CONTENT = 'REASON_PART I am thinking END_R';
const FUN_FIRST = 'FFF_FIRST_FUN_F';
const FUN_SECOND = 'SSS_SECOND_FUN_S';
const ARG_FIRST = 'AA_ARG_FST_AA';
const ARG_SECOND = 'BB_ARG_SND_BB';

const paramsSchema = {
  type: 'object',
  properties: { [ARG_FIRST]: { type: 'string', description: 'First argument' }, [ARG_SECOND]: { type: 'string', description: 'Second argument' } },
  required: [],
};
const PROBE_TOOLS = [
  { type: 'function', function: { name: FUN_FIRST, description: 'Test function foo', parameters: paramsSchema } },
  { type: 'function', function: { name: FUN_SECOND, description: 'Test function bar', parameters: paramsSchema } },
];

type Segment = { marker: boolean; value: string };

/** llama.cpp's `isspace` trim (ASCII whitespace only). */
export const trimAscii = (text: string): string => text.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '');

/** Text split into markers (`<…>`, `[…]`) and the text between them (segmentize_markers). */
function segments(text: string): Segment[] {
  const out: Segment[] = [];
  let opener = '';
  let border = 0;
  for (let at = 0; at < text.length; at++) {
    const c = text[at]!;
    if (!opener && (c === '<' || c === '[')) {
      if (border < at) out.push({ marker: false, value: text.slice(border, at) });
      border = at;
      opener = c;
    } else if (opener && ((opener === '<' && c === '>') || (opener === '[' && c === ']'))) {
      out.push({ marker: true, value: text.slice(border, at + 1) });
      border = at + 1;
      opener = '';
    }
  }
  if (border < text.length) out.push({ marker: false, value: text.slice(border) });
  return out;
}

const same = (a: Segment, b: Segment): boolean => a.marker === b.marker && a.value === b.value;

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function commonSuffix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n++;
  return n;
}

/** What differs between two renders, by segments and then characters (calculate_diff_split). */
export function diffSplit(left: string, right: string): { prefix: string; left: string; right: string; suffix: string } {
  const l = segments(left);
  const r = segments(right);
  if (l.length === 0) return { prefix: '', left: '', right, suffix: '' };
  if (r.length === 0) return { prefix: '', left, right: '', suffix: '' };
  let ls = 0;
  let le = l.length - 1;
  let rs = 0;
  let re = r.length - 1;
  let prefix = '';
  let suffix = '';
  let leftDone = false;
  let rightDone = false;
  while (ls !== le && rs !== re) {
    let advanced = false;
    if (same(l[ls]!, r[rs]!)) {
      prefix += l[ls]!.value;
      ls++;
      rs++;
      advanced = true;
    }
    if (same(l[le]!, r[re]!)) {
      suffix = l[le]!.value + suffix;
      if (ls !== le) le--;
      else leftDone = true;
      if (rs !== re) re--;
      else rightDone = true;
      advanced = true;
    }
    if (!advanced) break;
  }
  if (ls === le && rs !== re) {
    if (same(l[ls]!, r[re]!)) {
      suffix = r[re]!.value + suffix;
      re--;
      leftDone = true;
    } else if (same(l[ls]!, r[rs]!)) {
      prefix += r[rs]!.value;
      rs++;
      leftDone = true;
    }
  } else if (rs === re && ls !== le) {
    if (same(l[le]!, r[rs]!)) {
      suffix = l[le]!.value + suffix;
      le--;
      rightDone = true;
    } else if (same(l[ls]!, r[rs]!)) {
      prefix += l[ls]!.value;
      ls++;
      rightDone = true;
    }
  } else if (ls === le && rs === re && same(l[ls]!, r[rs]!) && l[ls]!.marker) {
    prefix += r[rs]!.value;
    leftDone = true;
    rightDone = true;
  }
  // Where an index ran past its start (a C++ iterator before begin), the ends read the segment there.
  const at = (list: Segment[], index: number): Segment => list[Math.max(0, Math.min(index, list.length - 1))]!;
  const textSuffix = !at(l, le).marker && !at(r, re).marker;
  const textPrefix = !at(r, rs).marker && !at(l, ls).marker;
  const join = (list: Segment[], from: number, to: number): string =>
    list
      .slice(from, to)
      .map((s) => s.value)
      .join('');
  const restLeft = join(l, ls, leftDone ? le : le + 1);
  const restRight = join(r, rs, rightDone ? re : re + 1);
  const suffixLength = textSuffix ? commonSuffix(restLeft, restRight) : 0;
  const prefixLength = textPrefix ? commonPrefix(restLeft.slice(0, restLeft.length - suffixLength), restRight.slice(0, restRight.length - suffixLength)) : 0;
  prefix += restLeft.slice(0, prefixLength);
  suffix = restLeft.slice(restLeft.length - suffixLength) + suffix;
  const result = {
    prefix,
    left: restLeft.slice(prefixLength, restLeft.length - suffixLength),
    right: restRight.slice(prefixLength, restRight.length - suffixLength),
    suffix,
  };
  if (result.left === '' && result.right === '') return { prefix: left, left: '', right: '', suffix: '' };
  if (result.left === '' && result.right !== '' && right.startsWith(left)) return { prefix: left, left: '', right: right.slice(left.length), suffix: '' };
  return result;
}

const MARKER = String.raw`(?:<[^>]*>|\[[^\]]*\])`;
const SPACE = String.raw`[ \t\n\r]*`;
/** The marker (and spaces) before and after `content` in `text`, wrapped (`<a> content </a>`) or only after it. */
function tagsAround(text: string, content: string, requirePost: boolean): { pre: string; post: string } | null {
  const wrapped = new RegExp(`(${MARKER}${SPACE})${escape(content)}(${SPACE}${MARKER}${SPACE})`).exec(text);
  if (wrapped) return { pre: wrapped[1]!, post: wrapped[2]! };
  const delimited = new RegExp(`${escape(content)}${SPACE}(${MARKER}${SPACE})${requirePost ? '' : '?'}`).exec(text);
  return delimited ? { pre: '', post: delimited[1] ?? '' } : null;
}

/** The tags of a thinking template, or null when it does not think (reasoning mode NONE). */
export function analyzeThinking(render: ProbeRender, source: string, supportsToolCalls: boolean): ThinkingTags | null {
  let thinks = false;
  let start = '';
  let end = '';
  const user = { role: 'user', content: USER_MSG };

  // Reasoning in an earlier assistant turn: the markers the template wraps it in.
  const withoutReasoning = render([user, { role: 'assistant', content: ASSISTANT_MSG }], { addGenerationPrompt: false, enableThinking: true });
  const withReasoning = render([user, { role: 'assistant', content: ASSISTANT_MSG, reasoning_content: THINKING_CONTENT }], {
    addGenerationPrompt: false,
    enableThinking: true,
  });
  if (withoutReasoning !== null && withReasoning !== null && diffSplit(withoutReasoning, withReasoning).right.includes(THINKING_CONTENT)) {
    const tags = tagsAround(withReasoning, THINKING_CONTENT, false);
    if (tags?.pre && tags.post) [thinks, start, end] = [true, tags.pre, tags.post];
    else if (tags?.post) [thinks, end] = [true, tags.post];
  }

  // The generation prompt with thinking off and on.
  const off = render([user], { addGenerationPrompt: true, enableThinking: false });
  const on = render([user], { addGenerationPrompt: true, enableThinking: true });
  if (off !== null && on !== null) {
    const diff = diffSplit(off, on);
    const leftTrimmed = trimAscii(diff.left);
    const rightTrimmed = trimAscii(diff.right);
    if (leftTrimmed === '' && diff.right !== '') {
      if (rightTrimmed !== '' && on.endsWith(rightTrimmed) && start === '') [start, thinks] = [diff.right, true];
    } else if (rightTrimmed === '' && diff.left !== '') {
      if (leftTrimmed !== '' && off.endsWith(leftTrimmed) && end === '') {
        const segs = segments(off).filter((s) => trimAscii(s.value) !== '');
        if (segs.length >= 2 && segs.at(-1)!.value === leftTrimmed && segs.at(-2)!.marker) start = segs.at(-2)!.value;
        [end, thinks] = [diff.left, true];
      }
    } else if (leftTrimmed !== '' && rightTrimmed !== '') {
      // One output's tail may reappear in the other with reasoning markers after it.
      for (const [base, extended] of [
        [on, off],
        [off, on],
      ] as const) {
        const anchor = base.slice(base.length - Math.min(base.length, 64));
        const at = extended.lastIndexOf(anchor);
        if (at < 0 || at + anchor.length >= extended.length) continue;
        const extra = trimAscii(extended.slice(at + anchor.length));
        if (!extra) continue;
        const segs = segments(extra).filter((s) => trimAscii(s.value) !== '');
        if (segs.length === 2 && segs[0]!.marker && segs[1]!.marker) {
          if (start === '') start = segs[0]!.value;
          if (end === '') end = segs[1]!.value;
          thinks = true;
          break;
        }
      }
    }
    if (!thinks && start === '' && end !== '') thinks = true;
  }

  // Reasoning rendered only next to tool calls.
  if (supportsToolCalls) {
    const plain = render([user, { role: 'assistant', content: ASSISTANT_MSG, reasoning_content: THINKING_CONTENT }], {
      addGenerationPrompt: false,
      enableThinking: true,
      tools: PROBE_TOOLS,
    });
    const call = { id: 'call00001', type: 'function', function: { name: FUN_FIRST, arguments: { [ARG_FIRST]: 'VVVV', [ARG_SECOND]: 'XXXX' } } };
    const withCall = render([user, { role: 'assistant', content: null, reasoning_content: THINKING_CONTENT, tool_calls: [call] }], {
      addGenerationPrompt: false,
      enableThinking: true,
      tools: PROBE_TOOLS,
    });
    if (plain !== null && withCall !== null && !plain.includes(THINKING_CONTENT) && withCall.includes(THINKING_CONTENT)) {
      const tags = tagsAround(withCall, THINKING_CONTENT, false);
      if (tags) [thinks, start, end] = [true, tags.pre, tags.post];
      else thinks = false;
    }
  }

  // llama.cpp's per-template patches that touch reasoning.
  if (!thinks && source.includes("content.split('</think>')") && !source.includes('reasoning_content') && !source.includes('<SPECIAL_12>'))
    [thinks, start, end] = [true, '<think>', '</think>'];
  if (source.includes('Write your thoughts between <think></think> and write your response between <response></response>'))
    [thinks, start, end] = [true, '<think>', '</think>'];
  if (source.includes('<SPECIAL_10>') && source.includes('<SPECIAL_11>') && source.includes('<SPECIAL_12>') && source.includes('<TOOL_RESPONSE>'))
    [thinks, start, end] = [true, '<think>\n', '</think>'];
  return thinks ? { start: trimAscii(start), end: trimAscii(end) } : null;
}

/** gpt-oss (harmony): the headers of the channels its answer is in (final, or commentary; `<|constrain|>json` for structured output). */
const HARMONY_HEADERS = ['final', 'commentary']
  .flatMap((channel) => [`<|channel|>${channel}<|message|>`, `<|channel|>${channel} <|constrain|>json<|message|>`])
  .flatMap((header) => [`<|start|>assistant${header}`, header]);

/**
 * What a template puts around its answer, as llama.cpp's parsers drop it: gpt-oss's final-channel header,
 * Muse Glimmer's message to the user (its header with or without the role, ended by `<|eom|>` when a call
 * follows), and the markers Command R7B and Kimi K3 wrap it in (llama.cpp's autoparser finds those: its
 * content ALWAYS_WRAPPED). Named here rather than found by diffing renders: these are all the collection
 * holds, and a diff needs the tool-call probe renders this analysis does not make.
 */
const ANSWER_WRAPPERS: readonly { headers: readonly string[]; end?: string; in: (source: string) => boolean }[] = [
  { headers: HARMONY_HEADERS, in: (source) => source.includes('<|channel|>') },
  {
    headers: ['<|start|>assistant to=user<|message|>', 'to=user<|message|>', '<|start|>assistant<|message|>', '<|message|>'],
    end: '<|eom|>',
    in: (source) => source.includes('<atem:function_calls>') && source.includes('<|eom|>'),
  },
  { headers: ['<|START_RESPONSE|>'], end: '<|END_RESPONSE|>', in: (source) => source.includes('<|START_RESPONSE|>') },
  // Kimi K3 writes its markers with a macro: `open_tag('response')`.
  {
    headers: ['<|open|>response<|sep|>'],
    end: '<|close|>response<|sep|>',
    in: (source) => source.includes('<|end_of_msg|>') && source.includes("open_tag('response')"),
  },
];

export function answerWrapper(source: string): { headers: string[]; end?: string } | undefined {
  const found = ANSWER_WRAPPERS.find((wrapper) => wrapper.in(source));
  return found ? { headers: [...found.headers], ...(found.end ? { end: found.end } : {}) } : undefined;
}
