/**
 * Tool calling in a conversation stored from the API (`store: true`): an answer's calls as blocks — the
 * function's name and its arguments, pretty-printed when they are JSON — and a tool result as a block
 * labelled with the call it answers (that call's name, and its id) and the result's content.
 */
import type { ChatToolCall } from '../../../../common/conversation.js';

/** JSON text indented; text that is not JSON as it is. */
const pretty = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
};

export function ToolCallBlocks({ calls }: { calls: readonly ChatToolCall[] }) {
  return (
    <>
      {calls.map((call) => (
        <figure className="tool-block" data-testid="tool-call" key={call.id}>
          <figcaption>
            call <code>{call.name}</code> <span className="note">{call.id}</span>
          </figcaption>
          <pre>{pretty(call.arguments)}</pre>
        </figure>
      ))}
    </>
  );
}

/** `call`: the call this result answers, when the history holds it. */
export function ToolResultBlock({ content, callId, call }: { content: string; callId: string; call: ChatToolCall | undefined }) {
  return (
    <figure className="tool-block result" data-testid="tool-result">
      <figcaption>
        result of <code>{call?.name ?? 'a call'}</code> <span className="note">{callId}</span>
      </figcaption>
      <pre>{pretty(content)}</pre>
    </figure>
  );
}
