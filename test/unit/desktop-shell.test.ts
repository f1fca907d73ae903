/**
 * The Electron shell's checklist, without Electron: the window options (contextIsolation, sandbox, no
 * nodeIntegration, …), the CSP on responses, navigation / window.open / permissions denied, the IPC
 * wrapper refusing a wrong sender and a bad payload (fake event objects), and the preload exposing only
 * named verbs with an `on()` that unsubscribes (electron's module replaced by a recorder), and the app's
 * lifetime: one instance, and a quit that runs the graceful stop once before quitting.
 */
import { describe, expect, it, vi } from 'vitest';
import { CALL_NAMES, EVENT_NAMES, callChannel, eventChannel, type ContractHandlers } from '../../common/contract.js';
import { claimSingleInstance, quitGracefully, type AppLike, type WindowLike } from '../../core/shell/app-lifetime.js';
import { registerContractIpc, sendContractEvent, type IpcInvokeEvent, type IpcMainLike } from '../../core/shell/ipc-bridge.js';
import { denyPermission, denyWindowOpen, guardNavigation, isTrustedSender, RENDERER_CSP, windowOptions, withCsp } from '../../core/shell/window-policy.js';

const APP = 'file:///opt/Manifold/resources/app.asar/dist/renderer/index.html';

describe('window policy', () => {
  it('opens the window isolated, sandboxed, without Node, with web security and no webviews', () => {
    const { webPreferences } = windowOptions('/opt/preload.cjs');
    expect(webPreferences).toMatchObject({
      preload: '/opt/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it('puts the CSP on every response: own scripts only, no objects, no framing', () => {
    expect(withCsp({ 'Content-Type': ['text/html'] })).toEqual({ 'Content-Type': ['text/html'], 'Content-Security-Policy': [RENDERER_CSP] });
    for (const directive of ["default-src 'self'", "script-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"])
      expect(RENDERER_CSP).toContain(directive);
    expect(RENDERER_CSP).not.toMatch(/unsafe-(inline|eval)/);
  });

  it('denies navigation away from the app, window.open and every permission', () => {
    const event = { preventDefault: vi.fn() };
    guardNavigation(event, APP, APP);
    expect(event.preventDefault).not.toHaveBeenCalled();
    guardNavigation(event, 'https://evil.example/', APP);
    expect(event.preventDefault).toHaveBeenCalledTimes(1);
    expect(denyWindowOpen()).toEqual({ action: 'deny' });
    const callback = vi.fn();
    expect(denyPermission({}, 'media', callback)).toBe(false);
    expect(callback).toHaveBeenCalledWith(false);
  });

  it('trusts only the app document in the top frame', () => {
    expect(isTrustedSender({ url: APP, parent: null }, APP)).toBe(true);
    expect(isTrustedSender({ url: `${APP}#/chat`, parent: null }, APP)).toBe(true);
    expect(isTrustedSender({ url: APP, parent: {} }, APP)).toBe(false);
    expect(isTrustedSender({ url: 'https://evil.example/index.html', parent: null }, APP)).toBe(false);
    expect(isTrustedSender({ url: 'file:///tmp/evil.html', parent: null }, APP)).toBe(false);
    expect(isTrustedSender(null, APP)).toBe(false);
  });
});

describe('contract over IPC', () => {
  function fakeIpcMain() {
    const handlers = new Map<string, (event: IpcInvokeEvent, args: unknown) => Promise<unknown>>();
    const ipc: IpcMainLike = { handle: (channel, listener) => void handlers.set(channel, listener), removeHandler: (channel) => void handlers.delete(channel) };
    return { ipc, handlers };
  }
  const handlers = { setRoutingPolicy: vi.fn(async ({ policy }: { policy: string }) => ({ policy })) } as unknown as ContractHandlers;

  it('registers every call once, through the one wrapper', () => {
    const { ipc, handlers: registered } = fakeIpcMain();
    const unregister = registerContractIpc(ipc, handlers, () => APP);
    expect([...registered.keys()].sort()).toEqual(CALL_NAMES.map(callChannel).sort());
    unregister();
    expect(registered.size).toBe(0);
  });

  it('runs a good call from the app frame, refuses a wrong sender and a bad payload before the handler', async () => {
    const { ipc, handlers: registered } = fakeIpcMain();
    const logged: string[] = [];
    registerContractIpc(
      ipc,
      handlers,
      () => APP,
      (line) => logged.push(line),
    );
    const call = registered.get(callChannel('setRoutingPolicy'))!;
    const app: IpcInvokeEvent = { senderFrame: { url: APP, parent: null } };
    expect(await call(app, { policy: 'round-robin' })).toEqual({ policy: 'round-robin' });
    await expect(call({ senderFrame: { url: 'https://evil.example/', parent: null } }, { policy: 'prefix' })).rejects.toThrow(
      'setRoutingPolicy: refused, the sender is not the Manifold window',
    );
    await expect(call({ senderFrame: { url: APP, parent: { url: APP } } }, { policy: 'prefix' })).rejects.toThrow(/refused/);
    await expect(call({ senderFrame: null }, { policy: 'prefix' })).rejects.toThrow(/refused/);
    await expect(call(app, { policy: 7 })).rejects.toThrow(/^setRoutingPolicy: policy: /);
    await expect(call(app, { policy: 'prefix', extra: 1 })).rejects.toThrow(/setRoutingPolicy/);
    expect(handlers.setRoutingPolicy).toHaveBeenCalledTimes(1);
    expect(logged).toEqual([
      'ipc: refused setRoutingPolicy from https://evil.example/',
      `ipc: refused setRoutingPolicy from ${APP}`,
      'ipc: refused setRoutingPolicy from a frame that is gone',
    ]);
  });
});

describe('events over IPC', () => {
  it('sends each event on its channel, checked against its schema', () => {
    const sent: [string, unknown][] = [];
    const entry = { seq: 1, time: 1000, level: 'info', line: 'hello' } as const;
    sendContractEvent((channel, payload) => sent.push([channel, payload]), 'log', entry);
    expect(sent).toEqual([[eventChannel('log'), entry]]);
    expect(() => sendContractEvent(() => {}, 'log', { ...entry, line: 5 } as unknown as typeof entry)).toThrow();
  });
});

describe('preload', () => {
  it('exposes one named verb per call and on() with its unsubscribe, never ipcRenderer or a generic invoke', async () => {
    const exposed = new Map<string, Record<string, unknown>>();
    const invoke = vi.fn(async (channel: string, args: unknown) => ({ channel, args }));
    const listeners = new Map<string, Set<(...a: unknown[]) => void>>();
    vi.doMock('electron', () => ({
      contextBridge: { exposeInMainWorld: (key: string, api: Record<string, unknown>) => exposed.set(key, api) },
      ipcRenderer: {
        invoke,
        on: (channel: string, l: (...a: unknown[]) => void) => listeners.set(channel, (listeners.get(channel) ?? new Set()).add(l)),
        removeListener: (channel: string, l: (...a: unknown[]) => void) => listeners.get(channel)?.delete(l),
      },
    }));
    await import('../../electron/preload.js');
    const api = exposed.get('manifold')!;
    expect([...exposed.keys()]).toEqual(['manifold']);
    expect(Object.isFrozen(api)).toBe(true);
    expect(Object.keys(api).sort()).toEqual([...CALL_NAMES, 'on'].sort());
    for (const forbidden of ['invoke', 'send', 'ipcRenderer']) expect(api[forbidden]).toBeUndefined();
    expect(await (api.getInfo as (a: unknown) => Promise<unknown>)({})).toEqual({ channel: callChannel('getInfo'), args: {} });
    const got: unknown[] = [];
    const off = (api.on as (n: string, l: (p: unknown) => void) => () => void)('log', (p) => got.push(p));
    listeners.get(eventChannel('log'))!.forEach((l) => l({}, { line: 'x' }));
    off();
    expect(listeners.get(eventChannel('log'))!.size).toBe(0);
    expect(got).toEqual([{ line: 'x' }]);
    expect(() => (api.on as (n: string, l: () => void) => void)('teleport', () => {})).toThrow('unknown event "teleport"');
    expect(EVENT_NAMES).toContain('chat');
    vi.doUnmock('electron');
  });
});

describe('app lifetime', () => {
  /** Electron's `app` as a recorder: listeners kept by event, quits counted, the lock given or not. */
  function recordedApp(lockFree = true) {
    const listeners = new Map<string, ((event: { preventDefault(): void }) => void)[]>();
    const app = {
      quits: 0,
      requestSingleInstanceLock: () => lockFree,
      on: (event: string, listener: (event: { preventDefault(): void }) => void) => listeners.set(event, [...(listeners.get(event) ?? []), listener]),
      quit: () => {
        app.quits++;
        app.emit('before-quit');
      },
      /** Emits like Electron; returns whether a listener prevented the default. */
      emit: (event: string): boolean => {
        let prevented = false;
        for (const listener of listeners.get(event) ?? []) listener({ preventDefault: () => (prevented = true) });
        return prevented;
      },
    };
    return app satisfies AppLike;
  }
  const recordedWindow = (minimized: boolean) => {
    const calls: string[] = [];
    const window: WindowLike = {
      isDestroyed: () => false,
      isMinimized: () => minimized,
      restore: () => void calls.push('restore'),
      show: () => void calls.push('show'),
      focus: () => void calls.push('focus'),
    };
    return { window, calls };
  };

  it('takes the single-instance lock; a second launch focuses the first window, restoring it when minimized', () => {
    const first = recordedApp(true);
    const { window, calls } = recordedWindow(true);
    let shown: WindowLike | null = null;
    expect(claimSingleInstance(first, () => shown)).toBe(true);
    first.emit('second-instance');
    expect(calls).toEqual([]);
    shown = window;
    first.emit('second-instance');
    expect(calls).toEqual(['restore', 'show', 'focus']);
    expect(first.quits).toBe(0);

    const second = recordedApp(false);
    expect(claimSingleInstance(second, () => null)).toBe(false);
    expect(second.quits).toBe(1);
  });

  it('prevents the first quit, runs the graceful stop once, then quits for real', async () => {
    const app = recordedApp();
    let finishStop: () => void = () => {};
    const stop = vi.fn(() => new Promise<void>((resolve) => (finishStop = resolve)));
    quitGracefully(app, stop, () => {});
    expect(app.emit('before-quit')).toBe(true);
    expect(stop).toHaveBeenCalledTimes(1);
    // A second quit while stopping waits for the same stop.
    expect(app.emit('before-quit')).toBe(true);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(app.quits).toBe(0);
    finishStop();
    await vi.waitFor(() => expect(app.quits).toBe(1));
    expect(app.emit('before-quit')).toBe(false);
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('quits even when the graceful stop fails, saying why', async () => {
    const app = recordedApp();
    const logged: string[] = [];
    quitGracefully(
      app,
      () => Promise.reject(new Error('engine gone')),
      (line) => logged.push(line),
    );
    expect(app.emit('before-quit')).toBe(true);
    await vi.waitFor(() => expect(app.quits).toBe(1));
    expect(logged).toEqual(['quit: the graceful stop failed (engine gone); quitting anyway']);
  });
});
