/**
 * The contract's events from one workstation, for any transport: `replicas`, `slots`, `throughput` and
 * `gpus` on a timer (and `replicas` again with each replica's resize outcome), and `log`, `rebuild`, `load`,
 * `download`, `chat` as they happen. The WebSocket bridge and the
 * Electron IPC bridge both feed their clients from here, each payload checked against its schema.
 */
import { contract, type EventName, type EventPayload } from '../common/contract.js';
import type { Workstation } from './workstation.js';

export type SendEvent = <E extends EventName>(name: E, payload: EventPayload<E>) => void;

/** The timed events' payloads now. */
export async function stateEvents(workstation: Workstation): Promise<{ [E in 'replicas' | 'slots' | 'throughput' | 'gpus']: EventPayload<E> }> {
  return {
    replicas: workstation.replicas.replicaView(),
    slots: await workstation.replicas.slotsView(),
    throughput: workstation.throughputSample(),
    gpus: workstation.gpuReport(),
  };
}

/** Parses a payload with its event's schema (an event never leaves core malformed). */
export function checkedEvent<E extends EventName>(name: E, payload: EventPayload<E>): EventPayload<E> {
  return contract.events[name].parse(payload) as EventPayload<E>;
}

/**
 * Sends every event of `workstation` through `send` until the returned function is called; the timed
 * ones every `intervalMs` while `wanted()` (someone listens), and once at the start.
 */
export function feedEvents(workstation: Workstation, send: SendEvent, intervalMs: number, wanted: () => boolean = () => true): () => void {
  const pushState = async (): Promise<void> => {
    if (!wanted()) return;
    const state = await stateEvents(workstation);
    send('replicas', state.replicas);
    send('slots', state.slots);
    send('throughput', state.throughput);
    send('gpus', state.gpus);
  };
  const timer = setInterval(() => void pushState().catch(() => {}), intervalMs);
  timer.unref();
  const unsubscribe = [
    workstation.log.onEntry((entry) => send('log', entry)),
    workstation.onRebuildProgress((progress) => {
      send('rebuild', progress);
      // A replica's outcome comes with its new sizes on the cards, not a tick later.
      if (progress.stage === 'done') send('replicas', workstation.replicas.replicaView());
    }),
    workstation.onLoadStep((step) => send('load', step)),
    workstation.downloads.onProgress((progress) => send('download', progress)),
    workstation.chat.onPiece((piece) => send('chat', piece)),
  ];
  return () => {
    clearInterval(timer);
    for (const stop of unsubscribe) stop();
  };
}
