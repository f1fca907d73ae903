/**
 * The Electron shell (thin): one window under core's security policy (window-policy.ts: contextIsolation,
 * sandbox, no nodeIntegration, a CSP, navigation, window.open and permission requests denied), the
 * contract over IPC through core's one wrapper (sender frame checked, arguments parsed), engines and the
 * tokenizer spawned with utilityProcess, the file dialog, and the OpenAI endpoint on loopback. One
 * instance (a second launch focuses this window), and quitting stops gracefully (`shell/app-lifetime.ts`).
 * All logic lives in core.
 */
import { app, BrowserWindow, dialog, ipcMain, session } from 'electron';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { feedEvents } from '../core/contract-events.js';
import { contractHandlers } from '../core/contract-handlers.js';
import { terminalLine } from '../core/logging/core-log.js';
import { serve, type Served } from '../core/serve.js';
import { claimSingleInstance, quitGracefully } from '../core/shell/app-lifetime.js';
import { registerContractIpc, sendContractEvent } from '../core/shell/ipc-bridge.js';
import { denyPermission, denyWindowOpen, guardNavigation, windowOptions, withCsp } from '../core/shell/window-policy.js';
import { utilityEngine, utilityTokenizer } from './utility-engine.js';

const rendererPage = join(import.meta.dirname, '..', 'renderer', 'index.html');
const appUrl = pathToFileURL(rendererPage).href;
const port = Number(process.env.MANIFOLD_PORT ?? 8080);

let shownWindow: BrowserWindow | null = null;
let served: Served | null = null;
/** Undoes what main() attached to the window (IPC handlers, the event feed) before the stop. */
let detachWindow: () => void = () => {};

async function main(): Promise<void> {
  quitGracefully(
    app,
    async () => {
      detachWindow();
      await served?.stop();
    },
    (line) => console.log(line),
  );
  await app.whenReady();
  session.defaultSession.setPermissionRequestHandler(denyPermission);
  session.defaultSession.setPermissionCheckHandler(() => false);
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => callback({ responseHeaders: withCsp(details.responseHeaders) }));

  const server = await serve(null, {
    spawn: utilityEngine,
    spawnTokenizer: utilityTokenizer,
    dataDir: app.getPath('userData'),
    modelsDir: join(app.getPath('home'), 'models'),
    log: (line, level) => console.log(terminalLine(line, level)),
    front: { port, anyPortIfTaken: true },
  });
  served = server;
  console.log(`OpenAI-compatible API: ${server.front.url}/v1`);
  console.log(`Dashboard in a browser: ${server.front.dashboardUrl}`);

  const window = new BrowserWindow(windowOptions(join(import.meta.dirname, 'preload.cjs')));
  shownWindow = window;
  window.webContents.setWindowOpenHandler(denyWindowOpen);
  window.webContents.on('will-navigate', (event, url) => guardNavigation(event, url, appUrl));
  window.webContents.on('will-redirect', (event, url) => guardNavigation(event, url, appUrl));
  window.webContents.on('will-attach-webview', (event) => event.preventDefault());
  window.once('ready-to-show', () => window.show());

  const handlers = contractHandlers(server.workstation, {
    pickModelFile: async () => {
      const picked = await dialog.showOpenDialog(window, {
        title: 'Load a model',
        properties: ['openFile'],
        filters: [{ name: 'GGUF models', extensions: ['gguf'] }],
      });
      return picked.canceled ? null : (picked.filePaths[0] ?? null);
    },
  });
  const unregister = registerContractIpc(
    ipcMain,
    handlers,
    () => appUrl,
    (line) => server.workstation.log.warn(line),
  );
  const toWindow = (channel: string, payload: unknown): void => {
    if (!window.isDestroyed()) window.webContents.send(channel, payload);
  };
  const stopEvents = feedEvents(server.workstation, (name, payload) => sendContractEvent(toWindow, name, payload), 1000);
  detachWindow = () => {
    stopEvents();
    unregister();
  };
  await window.loadURL(appUrl);
}

if (claimSingleInstance(app, () => shownWindow)) {
  app.on('window-all-closed', () => app.quit());
  main().catch((error: unknown) => {
    dialog.showErrorBox('Manifold could not start', (error as Error).message);
    app.exit(1);
  });
}
