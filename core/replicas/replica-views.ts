/**
 * The replica set as the dashboard and the API show it: a view per replica (state, where it runs, its
 * counters, its prefix cache's tiers, its live sizes) and every living replica's slots numbered globally.
 */
import type { ReplicaViewData } from '../../common/contract.js';
import type { SlotView } from '../../common/engine-protocol.js';
import { PREFIX_TIERS, type PrefixTierView } from '../../common/prefix-cache.js';
import type { Replica } from './replica.js';
import type { RoutingState } from './routing-state.js';

export type ReplicaView = ReplicaViewData;

export type GlobalSlotView = SlotView & { replica: number; replicaSlot: number };

/** The global number of replica `index`'s first slot. */
export function slotOffset(replicas: readonly Replica[], index: number): number {
  return replicas.slice(0, index).reduce((sum, r) => sum + r.slots, 0);
}

export function replicaViews(replicas: readonly Replica[], routing: RoutingState): ReplicaView[] {
  return replicas.map((r) => ({
    replica: r.index,
    alive: r.routable,
    running: r.running,
    routed: routing.routedCount(r.index),
    slots: r.slots,
    state: r.state,
    latchReason: r.latchReason,
    gpus: [...r.plan.gpus],
    cpus: [...r.cpus],
    cacheHitTokens: r.cacheHitTokens,
    promptTokens: r.promptTokens,
    completionTokens: r.completionTokens,
    pid: r.driver.pid ?? null,
    remote: r.driver.remote ? { ...r.driver.remote } : null,
    prefixTiers: prefixTiersOf(r, routing),
    sizes: r.info ? { contextSize: r.info.sizes.contextSize, slots: r.info.sizes.slots, kvType: r.info.sizes.kvType, gpuLayers: r.info.sizes.gpuLayers } : null,
    reEvaluation: r.reEvaluation,
  }));
}

/**
 * What each tier of a replica's prefix cache holds, as the exact index mirrors it: a node-llama-cpp engine's
 * tiers, or a llama-server child's host-memory prompt cache as its RAM tier and the slot files it lends as
 * its disk tier; null when it keeps none.
 */
function prefixTiersOf(r: Replica, routing: RoutingState): PrefixTierView[] | null {
  const budgets = r.driver.prefixTierBudgets?.() ?? null;
  if (!budgets) return null;
  const tiers = PREFIX_TIERS.filter((tier) => budgets[tier] > 0).map((tier) => {
    const entries = routing.savedEntries(r.index, tier);
    return { tier, entries, bytes: entries.reduce((sum, e) => sum + e.bytes, 0), budgetBytes: budgets[tier] };
  });
  return tiers.length ? tiers : null;
}

/**
 * Every living replica's slots, numbered globally, each with its replica; a slot whose engine does not say
 * which conversation it holds (llama-server's `/slots`) gets the one the router last sent there.
 */
export async function globalSlotsView(replicas: readonly Replica[], routing: Pick<RoutingState, 'slotConversation'>): Promise<GlobalSlotView[]> {
  const perReplica = await Promise.all(
    replicas.map(async (r) => {
      const client = r.routable || r.state === 'maintenance' ? r.driver.client : undefined;
      const slots = client ? await client.slots().catch(() => []) : [];
      const offset = slotOffset(replicas, r.index);
      return slots.map((s) => ({
        ...s,
        conversationId: s.conversationId ?? routing.slotConversation(r.index, s.slot),
        replica: r.index,
        replicaSlot: s.slot,
        slot: offset + s.slot,
      }));
    }),
  );
  return perReplica.flat();
}
