/**
 * Core's children under Electron: `utilityProcess.fork` of the built entries (dist/engine-bin/main.js for
 * an engine, dist/engine-bin/tokenizer-main.js for the tokenizer), adapted to core's `EngineProcess`. The
 * child talks over `process.parentPort` (engine-bin/transport.ts).
 */
import { utilityProcess } from 'electron';
import { join } from 'node:path';
import { forwardLines, type ChildEntry, type EngineExit, type SpawnEngine, type SpawnTokenizer } from './core/engine/engine-process.js';

function utilityChild(entry: ChildEntry, serviceName: string): SpawnEngine {
  const script = join(import.meta.dirname, '..', 'engine-bin', `${entry}.js`);
  return (options) => {
    const child = utilityProcess.fork(script, [], { env: { ...process.env, ...options.env }, stdio: 'pipe', serviceName });
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
}

export const utilityEngine: SpawnEngine = utilityChild('main', 'Manifold engine');
export const utilityTokenizer: SpawnTokenizer = utilityChild('tokenizer-main', 'Manifold tokenizer');
