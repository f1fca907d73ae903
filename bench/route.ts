/**
 * route: the router's decision latency (p50/p99) over replica counts, prompt lengths and index sizes,
 * for the exact index (per-slot mirrors and the radix trees over them) and the estimated one (LRU map), and
 * the index's memory per block. Block hashing of the prompt is timed apart, since it is done once per request.
 */
import { BLOCK_TOKENS, blockHashes } from '../core/router/block-hash.js';
import { EstimatedPrefixIndex, ExactPrefixIndex, type PrefixIndex } from '../core/router/prefix-index.js';
import { Router, type RouteCandidate } from '../core/router/router.js';
import { percentile, seeded, table } from './stats.js';

export interface RouteOptions {
  /** Which index forms to measure (both when absent). */
  kinds?: readonly ('exact' | 'estimated')[];
  replicas: number[];
  promptTokens: number[];
  indexBlocks: number[];
  decisions: number;
}

const WARMUP_DECISIONS = 2000;

/** Sequences per replica (a GPU engine's batch, as the simulated engines' in bench/simulate/). */
const SLOTS = 32;
/** Leading blocks every slot shares with the probe prompt: a system prompt (the worst case for a search per replica). */
const SYSTEM_BLOCKS = 16;

function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

/**
 * Fills an index with `blocks` blocks spread over the replicas' slots: every slot starts with the probe
 * prompt's first blocks (a shared system prompt) and goes on with its own; one slot of replica 0 holds the
 * probe prompt as far as a slot goes.
 */
function fill(kind: 'exact' | 'estimated', replicas: number, blocks: number, prompt: readonly number[], random: () => number): PrefixIndex {
  const perSlot = Math.max(1, Math.floor(blocks / (replicas * SLOTS)));
  const noise = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 2 ** 53));
  const held = (r: number, s: number): number[] => {
    const shared = r === 0 && s === 0 ? perSlot : Math.min(SYSTEM_BLOCKS, perSlot);
    const start = prompt.slice(0, shared);
    return [...start, ...noise(perSlot - start.length)];
  };
  if (kind === 'exact') {
    const index = new ExactPrefixIndex();
    for (let r = 0; r < replicas; r++) for (let s = 0; s < SLOTS; s++) index.setSlot(r, s, held(r, s));
    return index;
  }
  const index = new EstimatedPrefixIndex(Math.max(blocks, prompt.length));
  for (let r = 0; r < replicas; r++) for (let s = 0; s < SLOTS; s++) index.noteServed(r, held(r, s));
  return index;
}

export function runRoute(options: RouteOptions) {
  const random = seeded(7);
  const rows: Record<string, number | string>[] = [];
  for (const kind of options.kinds ?? (['exact', 'estimated'] as const)) {
    for (const blocks of options.indexBlocks) {
      for (const replicas of options.replicas) {
        for (const promptTokens of options.promptTokens) {
          const tokens = Array.from({ length: promptTokens }, () => Math.floor(random() * 32000));
          const before = heapUsed();
          const promptBlocks = blockHashes(tokens);
          const index = fill(kind, replicas, blocks, promptBlocks, random);
          const bytesPerBlock = (heapUsed() - before) / Math.max(1, index.size);
          const router = new Router(index);
          const candidates: RouteCandidate[] = Array.from({ length: replicas }, (_, r) => ({
            replica: r,
            running: r % 3,
            slots: SLOTS,
            prefillTokensPerMs: 2,
            pendingPrefillTokens: (r % 3) * 256,
          }));
          // Untimed first: the first decisions run before the JIT has compiled the router's code.
          for (let i = 0; i < WARMUP_DECISIONS; i++) router.choose(promptBlocks, tokens.length, candidates);
          const hashTimes: number[] = [];
          const routeTimes: number[] = [];
          for (let i = 0; i < options.decisions; i++) {
            const t0 = performance.now();
            const hashed = blockHashes(tokens);
            const t1 = performance.now();
            router.route(hashed, tokens.length, candidates);
            routeTimes.push((performance.now() - t1) * 1000);
            hashTimes.push((t1 - t0) * 1000);
          }
          rows.push({
            index: kind,
            blocks: index.size,
            replicas,
            promptTokens,
            route_p50_us: percentile(routeTimes, 50),
            route_p99_us: percentile(routeTimes, 99),
            hash_p50_us: percentile(hashTimes, 50),
            bytes_per_block: bytesPerBlock,
          });
        }
      }
    }
  }
  const text = table(
    ['index', 'blocks', 'replicas', 'prompt', 'route p50 µs', 'route p99 µs', 'hash p50 µs', 'B/block'],
    rows.map((r) => [
      r.index as string,
      String(r.blocks),
      String(r.replicas),
      String(r.promptTokens),
      r.route_p50_us as number,
      r.route_p99_us as number,
      r.hash_p50_us as number,
      r.bytes_per_block as number,
    ]),
  );
  return { rows, text, blockTokens: BLOCK_TOKENS };
}
