/** JSON text that may not be JSON: one parse with a fallback, for bodies and files whose shape a schema (or the caller) checks next. */

/** A fallback no JSON text parses to: `parseJsonOr(text, NOT_JSON) === NOT_JSON` says the text was not JSON. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/** The value `text` holds, or `fallback` when it is not JSON. */
export function parseJsonOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return fallback;
  }
}
