/** The workstation's recent log lines, newest last, with their time and level. */
import { useMemo } from 'react';
import { logText } from '../../store/workstation-slice.js';
import { useApp } from '../../store/use-app-store.js';

export function LogPanel() {
  const logs = useApp((s) => s.logs);
  const text = useMemo(() => logText(logs), [logs]);
  return (
    <section className="panel">
      <h2>Log</h2>
      <pre className="logs" aria-label="log">{text}</pre>
    </section>
  );
}
