/**
 * The preload: the only bridge between the sandboxed renderer and main. It exposes `window.manifold`,
 * one named verb per contract call and `on(event, listener)` returning its unsubscribe (the `DesktopApi`
 * type) — never ipcRenderer itself, never a generic invoke(channel). Bundled to CommonJS for the sandbox.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { CALL_NAMES, callChannel, EVENT_NAMES, eventChannel, type EventName } from '../common/contract.js';

const verbs = Object.fromEntries(CALL_NAMES.map((name) => [name, (args: unknown) => ipcRenderer.invoke(callChannel(name), args ?? {})]));

function on(name: EventName, listener: (payload: unknown) => void): () => void {
  if (!EVENT_NAMES.includes(name)) throw new Error(`unknown event "${String(name)}"`);
  const forward = (_event: IpcRendererEvent, payload: unknown): void => listener(payload);
  ipcRenderer.on(eventChannel(name), forward);
  return () => ipcRenderer.removeListener(eventChannel(name), forward);
}

contextBridge.exposeInMainWorld('manifold', Object.freeze({ ...verbs, on }));
