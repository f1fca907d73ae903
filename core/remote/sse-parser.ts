/**
 * A server-sent events reader for a response body that arrives in arbitrary pieces: bytes are decoded
 * as UTF-8 across piece boundaries, lines end in LF, CRLF or CR, `data:` lines of one event are joined
 * with newlines, comment lines (`:` — llama-server's keep-alive pings) and fields other than `event` and
 * `data` are skipped, and an event is complete at its blank line (the WHATWG event-stream rules, minus
 * `id`/`retry`, which a generation stream does not use).
 */

export interface SseEvent {
  /** The `event:` field; `message` when none was given. */
  readonly event: string;
  readonly data: string;
}

export class SseParser {
  private readonly decoder = new TextDecoder();
  private pending = '';
  private dataLines: string[] = [];
  private eventName = '';

  /** Feeds the next piece of the body; returns the events it completes, in order. */
  push(piece: Uint8Array | string): SseEvent[] {
    this.pending += typeof piece === 'string' ? piece : this.decoder.decode(piece, { stream: true });
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = this.pending.indexOf('\n', start);
      const cr = this.pending.indexOf('\r', start);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) break;
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (end === cr && cr === this.pending.length - 1) break;
      const line = this.pending.slice(start, end);
      start = end + (end === cr && this.pending[cr + 1] === '\n' ? 2 : 1);
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.pending = this.pending.slice(start);
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.dataLines.length === 0) {
        this.eventName = '';
        return undefined;
      }
      const event = { event: this.eventName || 'message', data: this.dataLines.join('\n') };
      this.dataLines = [];
      this.eventName = '';
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
    return undefined;
  }
}
