/**
 * The tokenizer child's entry: connects to the parent, serves the tokenizer protocol with one tokenizer
 * host, and exits when the parent is gone. Logs (llama.cpp's included) go to stderr, where the supervisor
 * prefixes them.
 */
import type { TokenizerMessage } from '../common/tokenizer-protocol.js';
import { TokenizerHost } from './tokenizer-host.js';
import { TokenizerServer } from './tokenizer-server.js';
import { connectToParent } from './transport.js';

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
const transport = connectToParent<TokenizerMessage>();
const server = new TokenizerServer(transport, new TokenizerHost(log), (code) => process.exit(code));
transport.onMessage((raw) => server.handle(raw));
transport.onParentGone(() => {
  log('parent is gone; exiting');
  void server.stop(0);
});
process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${String(reason)}`));
process.on('uncaughtException', (error) => log(`uncaught exception: ${error.stack ?? String(error)}`));
