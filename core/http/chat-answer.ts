/**
 * A chat answer as OpenAI clients read it, from the text an engine generated: a thinking model's reasoning
 * in `reasoning_content` (llama-server's `deepseek` format; common/reasoning-split.ts), its calls in
 * `tool_calls` (tool-calls-response.ts), the rest in `content`. Whole (`answerMessage`) or as stream
 * deltas (`ChatAnswerDeltas`): reasoning deltas first, then content and calls.
 */
import { ReasoningSplit, splitReasoning } from '../../common/reasoning-split.js';
import type { ThinkingTags } from '../../common/tokenizer-protocol.js';
import type { ChatCompletionRequest } from './openai-schemas.js';
import type { ToolPlan } from './tool-calls-request.js';
import { ToolCallDeltas, toolCallMessage, type ChatDelta } from './tool-calls-response.js';

/** How a thinking model's answer is read: its tags, whether the prompt opened them, and whether `content` keeps the raw text too (`deepseek-legacy`). */
export interface ReasoningPlan {
  tags: ThinkingTags;
  open: boolean;
  rawInContent: boolean;
}

/**
 * The reasoning plan of a request to a model whose template thinks (`tags`); null when its answer is read as plain content (`reasoning_format: none`,
 * or no thinking).
 */
export function reasoningPlan(body: ChatCompletionRequest, tags: ThinkingTags | null, open: boolean): ReasoningPlan | null {
  if (!tags || body.reasoning_format === 'none') return null;
  return { tags, open, rawInContent: body.reasoning_format === 'deepseek-legacy' };
}

export type AnswerDelta = ChatDelta | { reasoning_content: string };

type Finish = 'stop' | 'length';
type Message = ReturnType<ToolCallDeltas['message']> & { reasoning_content?: string };

/** The whole answer's message and finish reason. */
export function answerMessage(tools: ToolPlan | null, reasoning: ReasoningPlan | null, text: string, finish: Finish) {
  const split = reasoning ? splitReasoning(reasoning.tags, reasoning.open, text) : { reasoning: '', content: text };
  const content = reasoning?.rawInContent ? text : split.content;
  const answer: { message: Message & { role: 'assistant' }; finish_reason: Finish | 'tool_calls' } = tools
    ? toolCallMessage(tools, content, finish)
    : { message: { role: 'assistant', content }, finish_reason: finish };
  return split.reasoning ? { ...answer, message: { ...answer.message, reasoning_content: split.reasoning } } : answer;
}

/** A streamed answer's deltas: text in, OpenAI deltas out. */
export class ChatAnswerDeltas {
  private readonly split: ReasoningSplit | null;
  private readonly calls: ToolCallDeltas | null;
  private reasoning = '';
  private content = '';

  constructor(
    tools: ToolPlan | null,
    private readonly plan: ReasoningPlan | null,
  ) {
    this.split = plan ? new ReasoningSplit(plan.tags, plan.open) : null;
    this.calls = tools ? new ToolCallDeltas(tools) : null;
  }

  push(text: string): AnswerDelta[] {
    return this.deltas(this.split ? this.split.push(text) : [{ type: 'content', text }], text, false);
  }

  end(): AnswerDelta[] {
    return this.deltas(this.split ? this.split.end() : [], '', true);
  }

  finishReason(finish: Finish): Finish | 'tool_calls' {
    return this.calls ? this.calls.finishReason(finish) : finish;
  }

  /** What was streamed, as the whole answer's message. */
  message(): Message {
    const base = this.calls ? this.calls.message() : { content: this.content };
    return this.reasoning ? { ...base, reasoning_content: this.reasoning } : base;
  }

  /** `raw`: the text as it came (content too in `deepseek-legacy`). */
  private deltas(events: { type: 'reasoning' | 'content'; text: string }[], raw: string, last: boolean): AnswerDelta[] {
    const out: AnswerDelta[] = [];
    let content = '';
    for (const event of events) {
      if (event.type === 'reasoning') {
        this.reasoning += event.text;
        out.push({ reasoning_content: event.text });
      } else content += event.text;
    }
    if (this.plan?.rawInContent) content = raw;
    if (this.calls) out.push(...(content ? this.calls.push(content) : []), ...(last ? this.calls.end() : []));
    else if (content) {
      this.content += content;
      out.push({ content });
    }
    return out;
  }
}
