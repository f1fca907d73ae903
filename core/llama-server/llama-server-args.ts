/**
 * The command line of a replica's `llama-server` child, from the same load options a node-llama-cpp
 * engine gets: the model path (the arena's when there is one), `-np <slots>`, `-c <slots × tokens per
 * slot>` with `--no-kv-unified` so each slot has its own share as a node-llama-cpp sequence does,
 * `-t <threads>` (left to llama.cpp when 0), GPU layers, batch size, flash attention (`resolvedFlashAttention`)
 * and KV type, on a Unix socket (`--host <path>.sock`) or a loopback port. The web UI is off; the slot list (`/slots`)
 * stays on for the slot view, and the slot actions save to and restore from `slotFolder`
 * (`--slot-save-path`, for live resize). The host-memory prompt cache (`--cache-ram`) gets the run config's
 * RAM budget for the prefix cache when it sets one (`engine.prefixCache.ramBytes`, 0 turning it off) and
 * llama.cpp's default otherwise, worked out once per replica (`cacheRamMib`), and the slot choice
 * llama.cpp's default similarity: both named, so core's mirror of the cache (router/host-prompt-cache.ts)
 * counts with the same figures whichever binary runs.
 */
import { loadOptionsSchema, type LoadOptions, type LoadOptionsInput } from '../../common/engine-protocol.js';
import { isQuantizedKv } from '../../common/rebuild.js';
import { LLAMA_SERVER_SLOT_PROMPT_SIMILARITY, type HostPromptCacheLimits, type PrefixCacheBudgets } from '../../common/prefix-cache.js';

/** The child's host-memory prompt cache (`--cache-ram`, MiB) when the run config sets no RAM budget: llama.cpp's default, given explicitly. */
const LLAMA_SERVER_CACHE_RAM_MIB = 8192;

/** `--cache-ram` takes an int32 of MiB. */
const MAX_CACHE_RAM_MIB = 2 ** 31 - 1;

const MIB = 2 ** 20;

/**
 * The child's `--cache-ram` in MiB from the run config's prefix-cache budgets (`engine.prefixCache`, before
 * any default: a node-llama-cpp engine's 512 MiB RAM tier is not llama-server's): `ramBytes` rounded up to
 * whole MiB (0 turns the cache off), else llama.cpp's default. A llama-server child has no disk tier.
 */
export function cacheRamMib(budgets: PrefixCacheBudgets | undefined): number {
  const ramBytes = budgets?.ramBytes;
  return ramBytes === undefined ? LLAMA_SERVER_CACHE_RAM_MIB : Math.min(MAX_CACHE_RAM_MIB, Math.ceil(ramBytes / MIB));
}

/**
 * What the child's prompt cache of `ramMib` may give to evicted conversations: the cache less a copy of
 * every slot full (llama-server also copies idle slots into it, `--cache-idle-slots`, which the mirror does
 * not follow; a cache smaller than that leaves the mirror nothing, so it misses entries rather than claim
 * any), and one token's K and V by the model's shape (`kvBytesPerToken`; null when the header lacks the
 * shape: then the cache counts as llama-server's own floor, every slot's cells once). Null when it is off.
 */
export function promptCacheLimits(input: LoadOptionsInput, kvBytesPerToken: number | null, ramMib: number): HostPromptCacheLimits | null {
  if (ramMib === 0) return null;
  const load = loadOptionsSchema.parse(input);
  const cells = load.slots * load.contextSize;
  const cacheBytes = ramMib * MIB;
  if (kvBytesPerToken === null) return { budgetBytes: cacheBytes, bytesPerToken: Math.ceil(cacheBytes / cells) };
  return { budgetBytes: Math.max(0, cacheBytes - cells * kvBytesPerToken), bytesPerToken: kvBytesPerToken };
}

/**
 * The flash attention a child runs with, for the load's `flashAttention`: `auto` is off where the model runs
 * on the CPU (no layer on a GPU) with a KV cache that is not quantized, and llama.cpp's own `auto` everywhere
 * else; `true` and `false` are kept. llama.cpp's `auto` turns flash attention on wherever the backend has it,
 * the CPU included, a default made for GPUs. On an Intel Xeon with AVX-512 and AMX, llama-server built for it
 * prefilled a follow-up of 8–48 tokens 3–5.5× slower with it, decoded 1.2–1.5× slower (more with more
 * context) and prefilled a fresh 1,024–1,400-token prompt 1.2–1.5× faster (docs/BENCHMARKS.md, "Session
 * 16"); a chat is mostly follow-ups and answers. llama.cpp's issue #27086 measures it costing up to half the
 * prefill on Arm Neoverse V cores. A quantized KV cache needs it, so it keeps `auto`. node-llama-cpp's
 * prebuilt CPU kernels lose less to it, so its engine keeps llama.cpp's.
 */
export function resolvedFlashAttention(load: Pick<LoadOptions, 'flashAttention' | 'gpuLayers' | 'kvType'>): LoadOptions['flashAttention'] {
  if (load.flashAttention !== 'auto') return load.flashAttention;
  return load.gpuLayers === 0 && !isQuantizedKv(load.kvType) ? false : 'auto';
}

/** Where the child listens: a Unix socket's path (ending in `.sock`, which is how llama-server tells it from a host), or a loopback port. */
export type ListenAddress = { readonly socketPath: string } | { readonly port: number };

/** The command line; `ramMib`: the host-memory prompt cache's size (`cacheRamMib` of the run config's budgets). */
export function llamaServerArgs(input: LoadOptionsInput, listen: ListenAddress, slotFolder: string, ramMib: number): string[] {
  const load = loadOptionsSchema.parse(input);
  const args = ['-m', load.modelPath, ...('socketPath' in listen ? ['--host', listen.socketPath] : ['--host', '127.0.0.1', '--port', String(listen.port)])];
  args.push(
    '-np',
    String(load.slots),
    '-c',
    String(load.slots * load.contextSize),
    '--no-kv-unified',
    '--no-webui',
    '--slot-save-path',
    slotFolder,
    '--cache-ram',
    String(ramMib),
    '-sps',
    String(LLAMA_SERVER_SLOT_PROMPT_SIMILARITY),
  );
  if (load.threads > 0) args.push('-t', String(load.threads));
  if (load.gpuLayers !== 'auto') args.push('-ngl', String(load.gpuLayers));
  if (load.batchSize !== undefined) args.push('-b', String(load.batchSize));
  const flashAttention = resolvedFlashAttention(load);
  args.push('-fa', flashAttention === 'auto' ? 'auto' : flashAttention ? 'on' : 'off');
  args.push('-ctk', load.kvType, '-ctv', load.kvType);
  return args;
}
