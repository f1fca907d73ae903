/** The contract over Electron IPC: `window.manifold`, the preload's named verbs (see `DesktopApi`). */
import type { CallArgs, CallName, CallResult, DesktopApi } from '../../../common/contract.js';
import type { ContractClient } from './contract-client.js';

export function ipcClient(api: DesktopApi): ContractClient {
  return {
    call: <N extends CallName>(name: N, args: CallArgs<N>): Promise<CallResult<N>> =>
      (api[name] as unknown as (a: CallArgs<N>) => Promise<CallResult<N>>)(args),
    on: (name, listener) => api.on(name, listener),
    onConnection: (listener) => {
      listener('connected');
      return () => {};
    },
  };
}
