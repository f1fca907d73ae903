/**
 * A slot's KV state to a file and back (node-llama-cpp's sequence state save and load), with the failure
 * of either logged and turned into `false`: the caller then evaluates the tokens again or drops the state.
 * Used by live resize (slot-prefixes.ts) and the prefix cache (prefix-cache.ts).
 */
import type { Slot } from './slot.js';

/** Saves what `slot` holds to `file`; its size in bytes, or null when saving failed. */
export async function saveSlotState(slot: Slot, file: string, log: (line: string) => void, then: string): Promise<number | null> {
  try {
    return (await slot.sequence.saveStateToFile(file)).fileSize;
  } catch (error) {
    log(`saving slot ${slot.index}'s state failed (${(error as Error).message}); ${then}`);
    return null;
  }
}

/** Loads `file` into `slot` (replacing what it held); on failure the slot is left empty. */
export async function loadSlotState(slot: Slot, file: string, log: (line: string) => void, then: string): Promise<boolean> {
  try {
    await slot.sequence.loadStateFromFile(file, { acceptRisk: true });
    return true;
  } catch (error) {
    log(`loading slot ${slot.index}'s state failed (${(error as Error).message}); ${then}`);
    await slot.sequence.clearHistory().catch(() => {});
    return false;
  }
}
