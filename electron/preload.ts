/**
 * The preload: the only bridge between the sandboxed renderer and main. It exposes named verbs of the
 * contract through contextBridge, never ipcRenderer itself or a generic invoke(channel).
 */
import { contextBridge } from 'electron';

contextBridge.exposeInMainWorld('manifold', Object.freeze({ platform: process.platform }));
