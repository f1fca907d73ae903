/**
 * Core's children under Electron: `utilityProcess.fork` of the built entries (dist/engine-bin/main.js for
 * an engine, dist/engine-bin/tokenizer-main.js for the tokenizer), adapted to core's `EngineProcess`. The
 * child talks over `process.parentPort` (engine-bin/transport.ts). Each is forked under a name of its own
 * so that its exit carries the reason app's `child-process-gone` gives.
 */
import { app, utilityProcess } from 'electron';
import { join } from 'node:path';
import { forwardLines, type ChildEntry, type EngineExit, type SpawnEngine, type SpawnTokenizer } from '../core/engine/engine-process.js';
import { UtilityExitReasons } from '../core/shell/utility-exits.js';

const exitReasons = new UtilityExitReasons(app);

function utilityChild(entry: ChildEntry, kind: string): SpawnEngine {
  const script = join(import.meta.dirname, '..', 'engine-bin', `${entry}.js`);
  return (options) => {
    const name = exitReasons.nextName(kind);
    const child = utilityProcess.fork(script, [], { env: { ...process.env, ...options.env }, stdio: 'pipe', serviceName: name });
    const logListeners: ((line: string) => void)[] = [];
    const exitListeners: ((exit: EngineExit) => void)[] = [];
    forwardLines(child.stdout, logListeners);
    forwardLines(child.stderr, logListeners);
    let exited = false;
    child.on('exit', (code) => {
      exited = true;
      exitReasons.exited(name, code, (exit) => {
        for (const listener of exitListeners) listener(exit);
      });
    });
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
      onExit: (listener) => exitListeners.push(listener),
      onLog: (listener) => logListeners.push(listener),
      kill: (signal) => {
        if (child.pid !== undefined && signal && signal !== 'SIGTERM') process.kill(child.pid, signal);
        else child.kill();
      },
    };
  };
}

export const utilityEngine: SpawnEngine = utilityChild('main', 'engine');
export const utilityTokenizer: SpawnTokenizer = utilityChild('tokenizer-main', 'tokenizer');
