/**
 * Stop strings over streamed text: text is released only once it can no longer be the start of a stop
 * string, so a client never sees part of a stop string, and generation ends at the first full match.
 */

export class StopStringMatcher {
  private held = '';

  constructor(private readonly stops: readonly string[]) {}

  /** Adds text; returns what may be released now and, on a match, the stop string that matched. */
  push(text: string): { release: string; stoppedBy: string | null } {
    const buffer = this.held + text;
    let firstMatch: { at: number; stop: string } | null = null;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at !== -1 && (firstMatch === null || at < firstMatch.at)) firstMatch = { at, stop };
    }
    if (firstMatch) {
      this.held = '';
      return { release: buffer.slice(0, firstMatch.at), stoppedBy: firstMatch.stop };
    }
    const keep = this.longestPendingSuffix(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return { release: buffer.slice(0, buffer.length - keep), stoppedBy: null };
  }

  /** Whatever is still held back, when generation ends without a match. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }

  /** Length of the longest suffix of `buffer` that is a proper prefix of some stop string. */
  private longestPendingSuffix(buffer: string): number {
    let longest = 0;
    for (const stop of this.stops) {
      for (let n = Math.min(stop.length - 1, buffer.length); n > longest; n--) {
        if (buffer.endsWith(stop.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}
