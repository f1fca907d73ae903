/**
 * A log memory cut to size (core's recent entries, the dashboard's): the oldest debug lines go first, so
 * the engines' output (llama-server's per-request timings) never pushes Manifold's own events out.
 */
export function trimLog<T extends { level: string }>(entries: readonly T[], keep: number): T[] {
  let excess = entries.length - keep;
  if (excess <= 0) return [...entries];
  const kept = entries.filter((entry) => !(excess > 0 && entry.level === 'debug' && excess-- > 0));
  return kept.slice(kept.length - keep);
}
