/**
 * The renderer's one zustand store, made of slices (workstation, resize, chat, loader, library), each with its
 * state, actions and named pure selectors. `connectStore` wires the contract's events into it.
 */
import type { EventPayload } from '../../../common/contract.js';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ContractClient } from '../transport/contract-client.js';
import { createChatSlice, type ChatSlice } from './chat-slice.js';
import { createLibrarySlice, type LibrarySlice } from './library-slice.js';
import { createLoaderSlice, type LoaderSlice } from './loader-slice.js';
import { createRebuildSlice, type RebuildSlice } from './rebuild-slice.js';
import { createWorkstationSlice, type WorkstationSlice } from './workstation-slice.js';

export type AppState = WorkstationSlice & RebuildSlice & ChatSlice & LoaderSlice & LibrarySlice;
export type AppStore = StoreApi<AppState>;

export function createAppStore(client: ContractClient): AppStore {
  return createStore<AppState>()((set, get) => ({
    ...createWorkstationSlice(set, get, client),
    ...createRebuildSlice(set, get, client),
    ...createChatSlice(set, get, client),
    ...createLoaderSlice(set, get, client),
    ...createLibrarySlice(set, get, client),
  }));
}

/** Feeds the client's events into the store; returns the unsubscribe. */
export function connectStore(store: AppStore, client: ContractClient): () => void {
  const s = store.getState;
  const pendingPieces: EventPayload<'chat'>[] = [];
  const stops = [
    client.onConnection((connection) => {
      s().setConnection(connection);
      if (connection !== 'connected') return;
      s().refreshChat();
      void s()
        .refreshDownloads()
        .catch(() => {});
      // The library is fetched by its page when it opens; a reconnect (a restarted server) fetches it again if it was.
      if (s().library !== null) void s().refreshLibrary();
    }),
    client.on('replicas', (p) => {
      s().applyEvent('replicas', p);
      // The header's status follows the replicas.
      void s()
        .refreshInfo()
        .catch(() => {});
    }),
    client.on('slots', (p) => s().applyEvent('slots', p)),
    client.on('throughput', (p) => s().applyEvent('throughput', p)),
    client.on('gpus', (p) => s().applyEvent('gpus', p)),
    client.on('log', (p) => s().applyEvent('log', p)),
    client.on('rebuild', (p) => s().applyRebuildEvent(p)),
    client.on('load', (p) => s().applyLoadEvent(p)),
    client.on('download', (p) => s().applyDownloadEvent(p)),
    client.on('chat', (p) => {
      // Several streams send a piece per token each: the pieces of one frame go in as one update, so 8
      // streams draw 60 times a second, not 8 × tokens/s (without a frame clock, at once).
      if (typeof requestAnimationFrame !== 'function') return s().applyChatEvents([p]);
      if (pendingPieces.push(p) === 1) requestAnimationFrame(() => s().applyChatEvents(pendingPieces.splice(0)));
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}
