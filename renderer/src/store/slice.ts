/**
 * The shape every slice is made with: `set` and `get` over its own state plus what it reads of the other
 * slices (`Reads`, declared by the slice itself, so no slice imports the store that composes them), and the
 * contract client its actions call.
 */
import type { ContractClient } from '../transport/contract-client.js';

export type SliceCreator<T, Reads = unknown> = (
  set: (partial: Partial<T> | ((state: T & Reads) => Partial<T>)) => void,
  get: () => T & Reads,
  client: ContractClient,
) => T;

/** An error's message for people (a rejected call's message as core wrote it). */
export const messageOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/^Error invoking remote method '[^']+': (\w*Error: )?/, '');
