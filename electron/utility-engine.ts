/**
 * Engines under Electron: `utilityProcess.fork` of the built engine (dist/engine-bin/main.js), adapted to
 * core's `EngineProcess`. The child talks over `process.parentPort` (engine-bin/transport.ts).
 */
import { utilityProcess } from 'electron';
import { join } from 'node:path';
import { forwardLines, type EngineExit, type SpawnEngine } from './core/engine/engine-process.js';

const engineScript = join(import.meta.dirname, '..', 'engine-bin', 'main.js');

export const utilityEngine: SpawnEngine = (options) => {
  const child = utilityProcess.fork(engineScript, [], { env: { ...process.env, ...options.env }, stdio: 'pipe', serviceName: 'Manifold engine' });
  const logListeners: ((line: string) => void)[] = [];
  forwardLines(child.stdout, logListeners);
  forwardLines(child.stderr, logListeners);
  let exited = false;
  child.on('exit', () => (exited = true));
  return {
    get pid() {
      return child.pid;
    },
    send: (message) => {
      if (exited) return false;
      child.postMessage(message);
      return true;
    },
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => child.on('exit', (code) => listener({ code, signal: null } satisfies EngineExit)),
    onLog: (listener) => logListeners.push(listener),
    kill: (signal) => {
      if (child.pid !== undefined && signal && signal !== 'SIGTERM') process.kill(child.pid, signal);
      else child.kill();
    },
  };
};
