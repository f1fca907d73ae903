/** React access to the app store: the provider's store and `useApp(selector)`; `useShallow` for derived collections. */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppState, AppStore } from './app-store.js';

export const StoreContext = createContext<AppStore | null>(null);

export function useApp<T>(selector: (state: AppState) => T): T {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useApp outside the store provider');
  return useStore(store, selector);
}
