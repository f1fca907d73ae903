/**
 * The engine child's entry: serves the engine protocol with one model host (engine-bin/child-main.ts
 * connects, logs to stderr and exits when the parent is gone).
 */
import type { EngineMessage } from '../common/engine-protocol.js';
import { runChild } from './child-main.js';
import { EngineServer } from './engine-server.js';
import { ModelHost } from './model-host.js';

runChild<EngineMessage>((transport, log, exit) => new EngineServer(transport, new ModelHost(log), exit));
