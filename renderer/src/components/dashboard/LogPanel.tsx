/** The workstation's recent log lines, newest last. */
import { useApp } from '../../store/use-app-store.js';

export function LogPanel() {
  const logs = useApp((s) => s.logs);
  return (
    <section className="panel">
      <h2>Log</h2>
      <pre className="logs" aria-label="log">{logs.slice(-80).join('\n')}</pre>
    </section>
  );
}
