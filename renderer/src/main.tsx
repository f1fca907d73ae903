/** The renderer's entry: picks the transport (Electron's preload, else the control WebSocket), makes the store, mounts the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { DesktopApi } from '../../common/contract.js';
import { App } from './components/App.js';
import { connectStore, createAppStore } from './store/app-store.js';
import { StoreContext } from './store/use-app-store.js';
import { ipcClient } from './transport/ipc-client.js';
import { controlUrl, wsClient } from './transport/ws-client.js';
import './styles.css';

const desktop = (window as unknown as { manifold?: DesktopApi }).manifold;
const client = desktop ? ipcClient(desktop) : wsClient(controlUrl(window.location, window.localStorage));
const store = createAppStore(client);
connectStore(store, client);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>
  </StrictMode>,
);
