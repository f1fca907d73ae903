/**
 * The desktop window's security policy, as plain data and functions the Electron shell applies (so a unit
 * test checks every item without Electron): contextIsolation, sandbox, no nodeIntegration, webSecurity,
 * no webviews; a CSP on every response; navigation away from the app, window.open and every permission
 * request denied; IPC accepted only from the app's own top frame.
 */

/** The renderer's Content-Security-Policy: its own scripts and styles only, no plugins, no framing. */
export const RENDERER_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export interface WindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  title: string;
  show: boolean;
  backgroundColor: string;
  webPreferences: {
    preload: string;
    contextIsolation: true;
    sandbox: true;
    nodeIntegration: false;
    nodeIntegrationInWorker: false;
    nodeIntegrationInSubFrames: false;
    webSecurity: true;
    allowRunningInsecureContent: false;
    webviewTag: false;
    navigateOnDragDrop: false;
    spellcheck: false;
  };
}

/** BrowserWindow options for the main window; `preload` is the built preload script's path. */
export function windowOptions(preload: string): WindowOptions {
  return {
    width: 1360,
    height: 880,
    minWidth: 900,
    minHeight: 600,
    title: 'Manifold',
    show: false,
    backgroundColor: '#101418',
    webPreferences: {
      preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  };
}

/** `setWindowOpenHandler`: no window is ever opened by the page. */
export function denyWindowOpen(): { action: 'deny' } {
  return { action: 'deny' };
}

/** `will-navigate` / `will-redirect`: the page never leaves the app's own document. */
export function guardNavigation(event: { preventDefault(): void }, url: string, appUrl: string): void {
  if (url !== appUrl) event.preventDefault();
}

/** `setPermissionRequestHandler` and `setPermissionCheckHandler`: camera, notifications, … all refused. */
export function denyPermission(_contents: unknown, _permission: string, callback?: (granted: boolean) => void): boolean {
  callback?.(false);
  return false;
}

/** `onHeadersReceived`: every response the window loads carries the CSP. */
export function withCsp(headers: Record<string, string[] | string> | undefined): Record<string, string[] | string> {
  return { ...headers, 'Content-Security-Policy': [RENDERER_CSP] };
}

/** A frame that may call core over IPC: the app's own document, in the top frame. */
export interface SenderFrame {
  readonly url: string;
  readonly parent: unknown;
}

export function isTrustedSender(frame: SenderFrame | null | undefined, appUrl: string): boolean {
  if (!frame || frame.parent !== null) return false;
  try {
    const url = new URL(frame.url);
    const app = new URL(appUrl);
    return url.protocol === app.protocol && url.host === app.host && url.pathname === app.pathname;
  } catch {
    return false;
  }
}
