/**
 * The engine child's entry: connects to the parent, serves the engine protocol with one model host,
 * and exits when the parent is gone. Logs go to stderr, where the supervisor prefixes them.
 */
import { EngineServer } from './engine-server.js';
import { ModelHost } from './model-host.js';
import { connectToParent } from './transport.js';

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
const transport = connectToParent();
const server = new EngineServer(transport, new ModelHost(log), (code) => process.exit(code));
transport.onMessage((raw) => server.handle(raw));
transport.onParentGone(() => {
  log('parent is gone; exiting');
  void server.stop(0);
});
process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${String(reason)}`));
process.on('uncaughtException', (error) => log(`uncaught exception: ${error.stack ?? String(error)}`));
