/**
 * What both children (the engine, the tokenizer) share around their server: the entry — logs to stderr,
 * where the supervisor prefixes them; connect to the parent and hand it every message; stop when the
 * parent is gone; log unhandled errors rather than die of them — and the stop with a deadline.
 */
import { connectToParent, type ParentTransport } from './transport.js';

/** A child's message loop, as its entry drives it. */
export interface ChildServer {
  handle(raw: unknown): void;
  /** Frees what the child holds and exits with `code`. */
  stop(code: number): Promise<void>;
}

export type MakeChildServer<Message> = (transport: ParentTransport<Message>, log: (line: string) => void, exit: (code: number) => void) => ChildServer;

/** Runs this process as a child: connects to the parent and serves it with the server `makeServer` builds. */
export function runChild<Message>(makeServer: MakeChildServer<Message>): void {
  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };
  const transport = connectToParent<Message>();
  const server = makeServer(transport, log, (code) => process.exit(code));
  transport.onMessage((raw) => server.handle(raw));
  transport.onParentGone(() => {
    log('parent is gone; exiting');
    void server.stop(0);
  });
  process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${String(reason)}`));
  process.on('uncaughtException', (error) => log(`uncaught exception: ${error.stack ?? String(error)}`));
}

/** Runs `dispose`, then exits; exits regardless once `deadlineMs` has passed. */
export async function stopWithin(deadlineMs: number, dispose: () => Promise<void>, exit: () => void): Promise<void> {
  const deadline = setTimeout(exit, deadlineMs);
  try {
    await dispose();
  } catch {
    // Exiting anyway: the process going away frees what dispose could not.
  } finally {
    clearTimeout(deadline);
    // Give the channel a moment to flush the last replies.
    setTimeout(exit, 20);
  }
}
