/** The shape every slice is made with: the store's set/get and the contract client its actions call. */
import type { StoreApi } from 'zustand/vanilla';
import type { ContractClient } from '../transport/contract-client.js';
import type { AppState } from './app-store.js';

export type SliceCreator<T> = (set: StoreApi<AppState>['setState'], get: StoreApi<AppState>['getState'], client: ContractClient) => T;

/** An error's message for people (a rejected call's message as core wrote it). */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).replace(/^Error invoking remote method '[^']+': (\w*Error: )?/, '');
