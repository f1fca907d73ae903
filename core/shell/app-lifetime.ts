/**
 * The desktop app's lifetime, as policy without Electron (main.ts hands in `app` and the window): one
 * instance — a second launch focuses the first window and quits — and a quit that stops gracefully:
 * the first `before-quit` is prevented, the same graceful stop as `serve`'s SIGTERM runs (answers get
 * their grace period, engines stop), then the app quits for real.
 */

/** The part of Electron's `app` this policy uses. */
export interface AppLike {
  requestSingleInstanceLock(): boolean;
  on(event: 'second-instance', listener: () => void): unknown;
  on(event: 'before-quit', listener: (event: { preventDefault(): void }) => void): unknown;
  quit(): void;
}

/** The part of a BrowserWindow it uses. */
export interface WindowLike {
  isDestroyed(): boolean;
  isMinimized(): boolean;
  restore(): void;
  show(): void;
  focus(): void;
}

/**
 * Takes the single-instance lock. Held elsewhere: this launch quits (Electron tells the first instance,
 * which focuses its window) and false is returned. Held here: a later launch focuses `window()`.
 */
export function claimSingleInstance(app: AppLike, window: () => WindowLike | null): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', () => {
    const shown = window();
    if (!shown || shown.isDestroyed()) return;
    if (shown.isMinimized()) shown.restore();
    shown.show();
    shown.focus();
  });
  return true;
}

/**
 * On the first `before-quit`: prevents it, runs `stop` (the graceful stop), then quits. A quit asked for
 * while it stops waits for the same stop; once stopped, quitting goes through.
 */
export function quitGracefully(app: AppLike, stop: () => Promise<unknown>, log: (line: string) => void): void {
  let stage: 'running' | 'stopping' | 'stopped' = 'running';
  app.on('before-quit', (event) => {
    if (stage === 'stopped') return;
    event.preventDefault();
    if (stage === 'stopping') return;
    stage = 'stopping';
    void stop()
      .catch((error: unknown) => log(`quit: the graceful stop failed (${(error as Error).message}); quitting anyway`))
      .finally(() => {
        stage = 'stopped';
        app.quit();
      });
  });
}
