/**
 * rebuild: what a live resize costs one replica holding conversations, side by side in one run:
 * - a kv rebuild keeping the slot count (prefixes back from state files), one changing it (prefixes
 *   evaluated again after Applied), and a process restart with a fresh model load (what reloading costs);
 * - the next turn's prefill after each: reused tokens and time, against a cold prompt of the same length.
 */
import { rebuildRequestSchema, type RebuildChange } from '../common/rebuild.js';
import type { ReplicaSet } from '../core/replicas/replica-set.js';
import { withServed } from './served-replicas.js';
import { formatNumber, table } from './stats.js';

export interface RebuildBenchOptions {
  model: string;
  slots: number;
  contextSize: number;
  historyTokens: number;
}

const history = (length: number, offset: number): number[] => Array.from({ length }, (_, i) => 300 + ((i * 7 + offset) % 300));

async function fillSlots(set: ReplicaSet, options: RebuildBenchOptions): Promise<number[][]> {
  const histories: number[][] = [];
  for (let c = 0; c < options.slots; c++) {
    const prompt = history(options.historyTokens, c * 31 + 1);
    const done = await set.generate({ tokens: prompt, conversationId: `c${c}`, maxTokens: 2, ignoreEos: true });
    histories.push([...prompt, ...done.completionTokens]);
  }
  return histories;
}

/** The next turn of every conversation: mean reused tokens and mean prefill ms. */
async function nextTurns(set: ReplicaSet, histories: number[][]): Promise<{ reused: number; prefillMs: number }> {
  let reused = 0;
  let prefillMs = 0;
  for (const [c, tokens] of histories.entries()) {
    const done = await set.generate({ tokens: [...tokens, 350], conversationId: `c${c}`, maxTokens: 1, ignoreEos: true });
    reused += done.reusedTokens;
    prefillMs += done.timings.prefillMs;
  }
  return { reused: reused / histories.length, prefillMs: prefillMs / histories.length };
}

async function waitIdle(set: ReplicaSet): Promise<void> {
  while (!(await set.slotsView()).every((s) => s.state === 'idle')) await new Promise((resolve) => setTimeout(resolve, 5));
}

export async function runRebuild(options: RebuildBenchOptions) {
  return withServed(
    { model: options.model, replicas: 1, engine: { slots: options.slots, contextSize: options.contextSize, threads: 2 } },
    async (_target, served) => {
      const set = served.workstation.replicas;
      const rows: { how: string; downtimeMs: number; untilIdleMs: number; kept: string; reused: number; prefillMs: number }[] = [];
      const measure = async (how: string, act: () => Promise<{ kept: string }>): Promise<void> => {
        const histories = await fillSlots(set, options);
        const started = performance.now();
        const { kept } = await act();
        const downtimeMs = performance.now() - started;
        await waitIdle(set);
        const untilIdleMs = performance.now() - started;
        rows.push({ how, downtimeMs, untilIdleMs, kept, ...(await nextTurns(set, histories)) });
      };
      const rebuild = async (change: RebuildChange) => {
        const [outcome] = await set.rebuild(rebuildRequestSchema.parse({ replica: 0, change }));
        if (outcome?.outcome !== 'Applied') throw new Error(`rebuild ended ${outcome?.outcome}: ${JSON.stringify(outcome)}`);
        return { kept: `${outcome.prefixes.kept}/${outcome.prefixes.kept + outcome.prefixes.dropped} (${outcome.prefixes.slots[0]?.restoredBy ?? '-'})` };
      };
      await measure('kv rebuild, context ×2 (same slots)', () => rebuild({ contextSize: options.contextSize * 2 }));
      await measure(`kv rebuild, ${options.slots} → ${options.slots + 1} slots`, () => rebuild({ slots: options.slots + 1 }));
      await measure('process restart + model load', async () => {
        await set.restartReplica(0);
        return { kept: '0 (nothing survives)' };
      });
      const cold = await set.generate({ tokens: history(options.historyTokens + 3, 999), maxTokens: 1, ignoreEos: true });
      const text = table(
        ['how', 'serving again after ms', 'all slots idle after ms', 'prefixes kept', 'next turn reused tok', 'next turn prefill ms'],
        rows.map((r) => [
          r.how,
          formatNumber(r.downtimeMs, 0),
          formatNumber(r.untilIdleMs, 0),
          r.kept,
          formatNumber(r.reused, 0),
          formatNumber(r.prefillMs, 1),
        ]),
      );
      return {
        rows,
        coldPrefillMs: cold.timings.prefillMs,
        text: `${text}\n\ncold prefill of ${options.historyTokens + 3} tokens: ${formatNumber(cold.timings.prefillMs, 1)} ms`,
      };
    },
  );
}
