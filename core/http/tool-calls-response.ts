/**
 * A chat answer with tool calls, as OpenAI sends it: whole, `message.tool_calls` (`content` null when the
 * answer is only calls) and `finish_reason: "tool_calls"`; streamed, `delta.tool_calls` fragments — the
 * first of a call with its index, id, type and name and empty arguments, then its arguments — after the
 * content that came before it. Calls are read by the family's parser (common/tool-calls/tool-call-parsing.ts).
 */
import { randomBytes } from 'node:crypto';
import { parseToolCalls, ToolCallStream } from '../../common/tool-calls/tool-call-parsing.js';
import type { ParsedToolCall } from '../../common/tool-calls/tool-call-types.js';
import type { ToolPlan } from './tool-calls-request.js';

/** An id for a call, as OpenAI's look (`call_` and 24 letters and digits). */
const callId = (): string => `call_${randomBytes(12).toString('hex')}`;

const toolCall = (call: ParsedToolCall) => ({ id: callId(), type: 'function' as const, function: { name: call.name, arguments: call.arguments } });

/** A finish reason given the calls: `tool_calls` when the answer ended on its own with calls in it. */
const finishWith = (finish: 'stop' | 'length', called: boolean): 'stop' | 'length' | 'tool_calls' => (finish === 'stop' && called ? 'tool_calls' : finish);

/** The whole answer's message and finish reason. */
export function toolCallMessage(
  plan: ToolPlan,
  text: string,
  finish: 'stop' | 'length',
): { message: { role: 'assistant'; content: string | null; tool_calls?: ReturnType<typeof toolCall>[] }; finish_reason: 'stop' | 'length' | 'tool_calls' } {
  const { content, calls } = parseToolCalls(plan.format, text, plan.tools);
  const kept = calls.slice(0, plan.maxCalls);
  if (kept.length === 0) return { message: { role: 'assistant', content: text }, finish_reason: finish };
  return { message: { role: 'assistant', content: content || null, tool_calls: kept.map(toolCall) }, finish_reason: finishWith(finish, true) };
}

export type ChatDelta = { content: string } | { tool_calls: Record<string, unknown>[] };

/** A streamed answer's deltas: text in, OpenAI deltas out (content, and each call's two fragments). */
export class ToolCallDeltas {
  private readonly stream: ToolCallStream;
  private content = '';
  private readonly sent: ReturnType<typeof toolCall>[] = [];

  constructor(plan: ToolPlan) {
    this.stream = new ToolCallStream(plan.format, plan.maxCalls, plan.tools);
  }

  push(text: string): ChatDelta[] {
    return this.deltas(this.stream.push(text));
  }

  end(): ChatDelta[] {
    return this.deltas(this.stream.end());
  }

  finishReason(finish: 'stop' | 'length'): 'stop' | 'length' | 'tool_calls' {
    return finishWith(finish, this.sent.length > 0);
  }

  /** What was streamed, as the whole answer's message (content null when it was only calls). */
  message(): { content: string | null; tool_calls?: ReturnType<typeof toolCall>[] } {
    return this.sent.length === 0 ? { content: this.content } : { content: this.content || null, tool_calls: this.sent };
  }

  private deltas(events: ReturnType<ToolCallStream['push']>): ChatDelta[] {
    return events.flatMap((event): ChatDelta[] => {
      if (event.type === 'content') {
        this.content += event.text;
        return event.text ? [{ content: event.text }] : [];
      }
      const index = this.sent.length;
      const call = toolCall(event.call);
      this.sent.push(call);
      const { id, type, function: fn } = call;
      return [
        { tool_calls: [{ index, id, type, function: { name: fn.name, arguments: '' } }] },
        { tool_calls: [{ index, function: { arguments: fn.arguments } }] },
      ];
    });
  }
}
