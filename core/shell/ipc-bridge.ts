/**
 * The contract over Electron IPC, main's side: one `ipcMain.handle` per call, each registered through
 * the same wrapper, which refuses a sender that is not the app's top frame and parses the arguments with
 * the call's schema (`invokeCall`) before any handler runs; events go to the window as
 * `manifold:event:<name>`. Electron's objects are injected as small interfaces, so core stays plain Node
 * and a unit test drives it with fake event objects.
 */
import { CALL_NAMES, callChannel, eventChannel, type ContractHandlers, type EventName, type EventPayload } from '../../common/contract.js';
import { checkedEvent } from '../contract-events.js';
import { ContractCallError, invokeCall } from '../contract-handlers.js';
import { isTrustedSender, type SenderFrame } from './window-policy.js';

export interface IpcInvokeEvent {
  readonly senderFrame: SenderFrame | null;
}

/** The part of `ipcMain` the bridge uses. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcInvokeEvent, args: unknown) => Promise<unknown>): void;
  removeHandler(channel: string): void;
}

/** Registers every call of the contract; returns a function that removes them. */
export function registerContractIpc(
  ipcMain: IpcMainLike,
  handlers: ContractHandlers,
  appUrl: () => string,
  log: (line: string) => void = () => {},
): () => void {
  for (const name of CALL_NAMES) {
    ipcMain.handle(callChannel(name), async (event, args) => {
      if (!isTrustedSender(event.senderFrame, appUrl())) {
        log(`ipc: refused ${name} from ${event.senderFrame?.url ?? 'a frame that is gone'}`);
        throw new ContractCallError(`${name}: refused, the sender is not the Manifold window`);
      }
      return invokeCall(handlers, name, args);
    });
  }
  return () => {
    for (const name of CALL_NAMES) ipcMain.removeHandler(callChannel(name));
  };
}

/** Sends a contract event to the window (`send` is its webContents.send), checked against its schema. */
export function sendContractEvent<E extends EventName>(send: (channel: string, payload: unknown) => void, name: E, payload: EventPayload<E>): void {
  send(eventChannel(name), checkedEvent(name, payload));
}
