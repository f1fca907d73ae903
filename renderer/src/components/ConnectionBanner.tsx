/**
 * What the header says of the link to core, and the banner when it is not up: the server is not
 * answering (this tab retries by itself), or it refused this tab's token (a new dashboard link is needed).
 */
import type { CallResult } from '../../../common/contract.js';
import type { ConnectionState } from '../transport/contract-client.js';
import { useApp } from '../store/use-app-store.js';

/** The header's status line for a connection state and the info core gave. */
export function statusLine(connection: ConnectionState, info: CallResult<'getInfo'> | null): string {
  switch (connection) {
    case 'connecting':
      return 'connecting…';
    case 'reconnecting':
      return 'server not answering · retrying';
    case 'expired':
      return 'session expired';
    case 'connected':
      return info ? `${info.model || 'no model'} · ${info.status} · ${info.replicas_alive}/${info.replicas} replicas` : '…';
  }
}

export function ConnectionBanner() {
  const connection = useApp((s) => s.connection);
  if (connection === 'reconnecting') {
    return (
      <div className="connection-banner" role="status" data-testid="connection-banner">
        The workstation is not answering (stopped or restarting). This tab reconnects by itself when it is back — retrying every few seconds.
      </div>
    );
  }
  if (connection === 'expired') {
    return (
      <div className="connection-banner expired" role="alert" data-testid="connection-banner">
        This tab’s session has expired: the workstation no longer accepts its control token (it was restarted with <code>--new-token</code>, or the link is not
        the current one). To reconnect, open the <strong>Dashboard</strong> link that <code>npm run serve</code> prints (the token is kept in the data folder’s{' '}
        <code>control-token</code>), or use the Manifold desktop app.
      </div>
    );
  }
  return null;
}
