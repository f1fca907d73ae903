/**
 * The Electron shell (thin): one window with the security defaults (contextIsolation, sandbox, no
 * nodeIntegration, navigation, window.open and permission requests denied). All logic lives in
 * electron/core; wiring core's contract into IPC and spawning engines with utilityProcess belong here.
 */
import { app, BrowserWindow, session } from 'electron';
import { join } from 'node:path';

function createWindow(): BrowserWindow {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    title: 'Manifold',
    webPreferences: {
      preload: join(import.meta.dirname, 'preload.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  });
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event) => event.preventDefault());
  void window.loadFile(join(import.meta.dirname, '..', 'renderer', 'index.html'));
  return window;
}

void app.whenReady().then(() => {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  createWindow();
});
app.on('window-all-closed', () => app.quit());
