/**
 * The workstation's recent log lines, newest last, kept scrolled to the newest unless the reader scrolled
 * up to read. Manifold's own events by default; "Engine output" adds the engines' debug lines
 * (llama-server's start-up and per-request timings), which the log file always has.
 */
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { logText } from '../../store/workstation-slice.js';
import { useApp } from '../../store/use-app-store.js';

export function LogPanel() {
  const logs = useApp((s) => s.logs);
  const [engineOutput, setEngineOutput] = useState(false);
  const text = useMemo(() => logText(engineOutput ? logs : logs.filter((e) => e.level !== 'debug')), [logs, engineOutput]);
  const box = useRef<HTMLPreElement>(null);
  // Whether the reader is at the newest line: then new lines keep it there.
  const atEnd = useRef(true);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, [text]);
  return (
    <section className="panel">
      <div className="panel-head">
        <h2>Log</h2>
        <label className="toggle">
          <input type="checkbox" checked={engineOutput} onChange={(e) => setEngineOutput(e.target.checked)} />
          Engine output
        </label>
      </div>
      <pre
        ref={box}
        className="logs"
        aria-label="log"
        tabIndex={0}
        onScroll={(e) => {
          const el = e.currentTarget;
          atEnd.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 4;
        }}
      >
        {text}
      </pre>
    </section>
  );
}
