/** The workstation's window: a header with the model and status, and three views — dashboard, chat, models. */
import { useState } from 'react';
import { useApp } from '../store/use-app-store.js';
import { ChatView } from './chat/ChatView.js';
import { Dashboard } from './dashboard/Dashboard.js';
import { ModelLoader } from './loader/ModelLoader.js';

const VIEWS = { dashboard: 'Dashboard', chat: 'Chat', models: 'Models' } as const;
type View = keyof typeof VIEWS;

export function App() {
  const [view, setView] = useState<View>('dashboard');
  const info = useApp((s) => s.info);
  const connected = useApp((s) => s.connected);
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
          {!connected ? 'connecting…' : info ? `${info.model || 'no model'} · ${info.status} · ${info.replicas_alive}/${info.replicas} replicas` : '…'}
        </span>
      </header>
      <main className="view">
        {view === 'dashboard' && <Dashboard />}
        {view === 'chat' && <ChatView />}
        {view === 'models' && <ModelLoader />}
      </main>
    </div>
  );
}
