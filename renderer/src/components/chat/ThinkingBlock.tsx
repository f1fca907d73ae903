/**
 * A thinking model's thinking above its answer, as LM Studio shows it: a collapsed block that reads
 * "Thinking… 3.1 s" while the model thinks (open it to watch the thinking stream) and "Thought for 3.1 s"
 * with the thinking's length once the answer begins.
 */
import { useEffect, useState } from 'react';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** `thinking`: the answer has not begun yet (the time keeps counting); `thinkingMs` unknown (an answer stored from the API): no time shown. */
export function ThinkingBlock({ reasoning, thinkingMs, thinking }: { reasoning: string; thinkingMs: number | undefined; thinking: boolean }) {
  // While it thinks, the time is redrawn every 100 ms from the moment it was last reported.
  const [since] = useState(() => Date.now());
  const [now, setNow] = useState(since);
  useEffect(() => {
    if (!thinking) return;
    const timer = setInterval(() => setNow(Date.now()), 100);
    return () => clearInterval(timer);
  }, [thinking]);
  const shownMs = thinking ? Math.max(thinkingMs ?? 0, now - since) : thinkingMs;
  return (
    <details className="thinking" data-testid="thinking">
      <summary>
        {thinking ? (
          <span className="thinking-live">Thinking… {seconds(shownMs ?? 0)}</span>
        ) : shownMs === undefined ? (
          <>Thoughts</>
        ) : (
          <>Thought for {seconds(shownMs)}</>
        )}
        <span className="note"> · {reasoning.length.toLocaleString()} characters</span>
      </summary>
      <pre className="thinking-text">{reasoning}</pre>
    </details>
  );
}
