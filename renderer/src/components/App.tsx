/** The workstation's window: a header with the model and status, and three views — dashboard, chat, models. */
import { useEffect, useState } from 'react';
import { useApp } from '../store/use-app-store.js';
import { ChatView } from './chat/ChatView.js';
import { ConnectionBanner, statusLine } from './ConnectionBanner.js';
import { Dashboard } from './dashboard/Dashboard.js';
import { ModelLoader } from './loader/ModelLoader.js';

const VIEWS = { dashboard: 'Dashboard', chat: 'Chat', models: 'Models' } as const;
type View = keyof typeof VIEWS;

export function App() {
  // The view survives a reload of this tab.
  const [view, setView] = useState<View>(() => {
    const kept = window.sessionStorage.getItem('manifold-view');
    return kept !== null && kept in VIEWS ? (kept as View) : 'dashboard';
  });
  useEffect(() => window.sessionStorage.setItem('manifold-view', view), [view]);
  const info = useApp((s) => s.info);
  const connection = useApp((s) => s.connection);
  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">Manifold</span>
        <nav aria-label="views">
          {(Object.keys(VIEWS) as View[]).map((v) => (
            <button key={v} className={v === view ? 'tab active' : 'tab'} aria-pressed={v === view} onClick={() => setView(v)}>
              {VIEWS[v]}
            </button>
          ))}
        </nav>
        <span className="status" data-testid="status">
          {statusLine(connection, info)}
        </span>
      </header>
      <ConnectionBanner />
      <main className="view">
        {view === 'dashboard' && <Dashboard onOpenModels={() => setView('models')} />}
        {view === 'chat' && <ChatView onOpenModels={() => setView('models')} />}
        {view === 'models' && <ModelLoader />}
      </main>
    </div>
  );
}
