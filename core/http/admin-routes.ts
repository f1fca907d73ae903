/**
 * The admin calls for scripts and the `manifold` CLI: `POST /admin/<call>` runs a contract call (precheck,
 * rebuild, restart; pull, ls, rm, load, unload and the state `ps` shows)
 * with the JSON body as its arguments and answers its result as JSON. They need the control API's token
 * (`Authorization: Bearer <token>`), never the API key: they change the server, not just ask it.
 * A rebuild that ends RejectedIntact, RolledBack or Latched is still a 200: the call worked and the
 * outcome says what happened; 400 is a bad request, 409 a rebuild while another runs.
 */
import type { ServerResponse } from 'node:http';
import type { CallName, ContractHandlers } from '../../common/contract.js';
import { ContractCallError, invokeCall } from '../contract-handlers.js';
import { RebuildInProgressError } from '../replicas/replica-errors.js';
import { HttpError, sendJson } from './http-error.js';

/** Admin path → contract call. */
export const ADMIN_CALLS: ReadonlyMap<string, CallName> = new Map([
  ['/admin/precheck', 'precheckRebuild'],
  ['/admin/rebuild', 'rebuild'],
  ['/admin/restart', 'restartReplica'],
  // The model library and downloads (`manifold pull / ls / rm / ps`).
  ['/admin/pull', 'downloadModel'],
  ['/admin/cancel', 'cancelDownload'],
  ['/admin/downloads', 'listDownloads'],
  ['/admin/ls', 'listLibrary'],
  ['/admin/rm', 'deleteModel'],
  ['/admin/load', 'loadModel'],
  ['/admin/unload', 'unloadModel'],
  ['/admin/info', 'getInfo'],
  ['/admin/replicas', 'getReplicas'],
  ['/admin/slots', 'getSlots'],
  ['/admin/throughput', 'getThroughput'],
]);

export async function handleAdminCall(handlers: ContractHandlers, call: CallName, body: unknown, res: ServerResponse): Promise<void> {
  try {
    sendJson(res, 200, await invokeCall(handlers, call, body));
  } catch (error) {
    if (error instanceof ContractCallError) throw new HttpError(400, error.message);
    if (error instanceof RebuildInProgressError) throw new HttpError(409, error.message, 'conflict_error');
    throw error;
  }
}
