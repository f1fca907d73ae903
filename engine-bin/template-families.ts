/**
 * The template families llama.cpp handles by name instead of by its differential autoparser
 * (`common_chat_try_specialized_template` in common/chat.cpp): each is told from the template's source the
 * same way, in the same order, and brings what llama.cpp does for it before and after rendering — the
 * messages in the shape its template reads (reasoning as `thinking`, content blocks, tool results folded
 * into the assistant turn), the prompt's last touch, and its thinking tags. A template that matches none is
 * analysed (template-reasoning.ts).
 */
import type { ThinkingTags } from './template-reasoning.js';

type Messages = Record<string, unknown>[];

export interface TemplateFamily {
  name: string;
  matches(source: string): boolean;
  /** Its thinking tags (null: it does not think); a function of the source where the family spans both. */
  thinking: ThinkingTags | null | ((source: string) => ThinkingTags | null);
  /** The messages as this family's template reads them. */
  adjust?(messages: Messages, source: string): Messages;
  /** The rendered prompt's last touch. */
  finish?(prompt: string, addGenerationPrompt: boolean): string;
}

const has = (source: string, ...needles: string[]): boolean => needles.every((needle) => source.includes(needle));
const think = (start: string, end: string): ThinkingTags => ({ start, end });

/** An assistant's `reasoning_content` also as `thinking`, the name gpt-oss's and LFM2's templates read. */
function reasoningAsThinking(messages: Messages, dropContentBesideCalls: boolean): Messages {
  return messages.map((message) => {
    if (typeof message.reasoning_content !== 'string') return message;
    const adjusted: Record<string, unknown> = { ...message, thinking: message.reasoning_content };
    if (dropContentBesideCalls && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) delete adjusted.content;
    return adjusted;
  });
}

/** Ministral 3: system and assistant content as blocks, reasoning first as a `thinking` block. */
function contentBlocks(messages: Messages): Messages {
  return messages.map((message) => {
    if (message.role !== 'system' && message.role !== 'assistant') return message;
    const blocks: unknown[] = [];
    if (typeof message.reasoning_content === 'string') blocks.push({ type: 'thinking', thinking: message.reasoning_content });
    if (typeof message.content === 'string') blocks.push({ type: 'text', text: message.content });
    else if (Array.isArray(message.content)) blocks.push(...(message.content as unknown[]));
    const adjusted: Record<string, unknown> = { ...message, content: blocks };
    delete adjusted.reasoning_content;
    return adjusted;
  });
}

/** DeepSeek V4: a run of tool results in the order of the calls that asked for them. */
function toolResultsInCallOrder(messages: Messages): Messages {
  const out = [...messages];
  let order = new Map<string, number>();
  for (let i = 0; i < out.length;) {
    const message = out[i]!;
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      order = new Map((message.tool_calls as { id?: string }[]).flatMap((call, index) => (call.id ? [[call.id, index] as const] : [])));
      i++;
      continue;
    }
    if (message.role !== 'user' && message.role !== 'tool') {
      i++;
      continue;
    }
    let end = i;
    const tools: number[] = [];
    for (; end < out.length; end++) {
      if (out[end]!.role === 'tool') tools.push(end);
      else if (out[end]!.role !== 'user') break;
    }
    if (tools.length > 1 && order.size > 0) {
      const rank = (m: Record<string, unknown>): number => order.get(String(m.tool_call_id ?? '')) ?? 0;
      const sorted = tools.map((at) => out[at]!).sort((a, b) => rank(a) - rank(b));
      tools.forEach((at, k) => (out[at] = sorted[k]!));
    }
    i = end;
  }
  return out;
}

/** Older Gemma 4 templates: an assistant's calls, their results and the answer after them as one turn with `tool_responses`. */
function gemmaToolResponses(messages: Messages): Messages {
  const out: Messages = [];
  for (let i = 0; i < messages.length;) {
    const message = messages[i]!;
    const calls = message.tool_calls;
    if (message.role !== 'assistant' || !Array.isArray(calls) || calls.length === 0) {
      out.push(message);
      i++;
      continue;
    }
    const responses: unknown[] = [];
    i++;
    while (i < messages.length && messages[i]!.role === 'tool') {
      const result = messages[i]!;
      let response: unknown = result.content;
      if (typeof response === 'string') {
        try {
          response = JSON.parse(response) as unknown;
        } catch {
          // Not JSON: the text as it is.
        }
      }
      const call = calls[responses.length] as { function?: { name?: string } } | undefined;
      responses.push({ name: call?.function?.name || String(result.tool_call_id ?? ''), response: response ?? null });
      i++;
    }
    const turn: Record<string, unknown> = { role: 'assistant', tool_calls: calls };
    if (responses.length > 0) turn.tool_responses = responses;
    const next = messages[i];
    const nextCalls = next?.tool_calls;
    const hasContent = typeof next?.content === 'string' ? next.content !== '' : Array.isArray(next?.content) && next.content.length > 0;
    if (next?.role === 'assistant' && !(Array.isArray(nextCalls) && nextCalls.length > 0) && hasContent) {
      turn.content = next.content;
      i++;
    }
    if (typeof message.reasoning_content === 'string') turn.reasoning_content = message.reasoning_content;
    out.push(turn);
  }
  return out;
}

/** In llama.cpp's order: the first that matches decides. */
export const TEMPLATE_FAMILIES: readonly TemplateFamily[] = [
  {
    name: 'ministral-3',
    matches: (s) => has(s, '[SYSTEM_PROMPT]', '[TOOL_CALLS]', '[ARGS]') && !s.includes('[CALL_ID]'),
    thinking: think('[THINK]', '[/THINK]'),
    adjust: contentBlocks,
  },
  {
    name: 'gpt-oss',
    matches: (s) => s.includes('<|channel|>'),
    thinking: think('<|channel|>analysis<|message|>', '<|end|>'),
    adjust: (m) => reasoningAsThinking(m, true),
    // A history that ends with an answer ends it with <|end|>, as the model saw it mid-conversation, not <|return|>.
    finish: (prompt, addGenerationPrompt) => {
      const at = prompt.lastIndexOf('<|return|>');
      return addGenerationPrompt || at < 0 ? prompt : `${prompt.slice(0, at)}<|end|>${prompt.slice(at + '<|return|>'.length)}`;
    },
  },
  // Its thinking is a message to itself (` to=self<|message|>…<|eom|>`); the leading space is the answer's.
  { name: 'muse-glimmer', matches: (s) => has(s, '<atem:function_calls>', '<|eom|>'), thinking: think('to=self<|message|>', '<|eom|>') },
  { name: 'functionary-v3.2', matches: (s) => has(s, '>>>all', '>>>${recipient}'), thinking: null },
  { name: 'kimi-k2', matches: (s) => has(s, '<|tool_calls_section_begin|>', '<|tool_call_begin|>'), thinking: think('<think>', '</think>') },
  { name: 'kimi-k3', matches: (s) => has(s, '<|open|>', '<|close|>', '<|end_of_msg|>'), thinking: think('<|open|>think<|sep|>', '<|close|>think<|sep|>') },
  { name: 'cohere2-moe', matches: (s) => has(s, '<|START_TEXT|>', '<|START_ACTION|>'), thinking: think('<|START_THINKING|>', '<|END_THINKING|>') },
  {
    name: 'lfm2',
    matches: (s) => has(s, '<|tool_list_start|>', '<|tool_list_end|>'),
    thinking: think('<think>', '</think>'),
    adjust: (m) => reasoningAsThinking(m, false),
  },
  {
    name: 'lfm2.5',
    matches: (s) => s.includes('List of tools: [') && !s.includes('<|tool_list_start|>'),
    thinking: think('<think>', '</think>'),
    adjust: (m) => reasoningAsThinking(m, false),
  },
  { name: 'gigachat-v3', matches: (s) => has(s, '<|role_sep|>', '<|message_sep|>') && !s.includes('<|function_call|>'), thinking: null },
  { name: 'minimax-m3', matches: (s) => has(s, ']<]minimax[>[', '<tool_call>', '<invoke name='), thinking: think('<mm:think>', '</mm:think>') },
  {
    name: 'deepseek-v3.2',
    matches: (s) => has(s, 'dsml_token', 'DSML') && (s.includes('function_calls') || s.includes('tool_calls')),
    thinking: think('<think>', '</think>'),
    adjust: (m, s) => (s.includes('function_calls') ? m : toolResultsInCallOrder(m)),
  },
  {
    name: 'gemma4',
    matches: (s) => s.includes("'<|tool_call>call:'"),
    thinking: think('<|channel>thought', '<channel|>'),
    adjust: (m, s) => (s.includes('{#- OpenAI Chat Completions:') ? m : gemmaToolResponses(m)),
    // After content and a call the template opens no model turn: llama.cpp opens it.
    finish: (prompt, addGenerationPrompt) => (addGenerationPrompt && prompt.endsWith('<turn|>\n') ? `${prompt}<|turn>model\n` : prompt),
  },
  { name: 'minicpm5', matches: (s) => has(s, 'Tool usage guidelines:', '<function name="', '<param name="'), thinking: think('<think>', '</think>') },
  {
    name: 'qwen3-coder',
    matches: (s) => has(s, '<tool_call>', '<function=', '<parameter='),
    thinking: (s) => (s.includes('<think>') ? think('<think>', '</think>') : null),
  },
];

/** The family llama.cpp handles this template as, if any. */
export const familyOf = (source: string): TemplateFamily | undefined => TEMPLATE_FAMILIES.find((family) => family.matches(source));
