/**
 * The tiered prefix cache as data (engine-bin/prefix-cache.ts keeps it, core's exact index mirrors it):
 * its byte budgets (run config `engine.prefixCache`, load option `prefixCache`), its two tiers, and the
 * report a `started` message carries of what the cache did while the request took its slot — which saved
 * entries were made (from the slot's evicted conversation), spilled to disk or dropped, and which one the
 * slot was restored from, how fast — and each tier as the dashboard's slot view shows it; and what lets
 * one engine borrow another's entry (its tier folders, a generate request's borrow hint).
 */
import { z } from 'zod';

export const PREFIX_TIERS = ['ram', 'disk'] as const;
export const prefixTierSchema = z.enum(PREFIX_TIERS);
export type PrefixTier = z.infer<typeof prefixTierSchema>;

/** Per engine: 512 MiB of saved KV state in the child's memory, 2 GiB on disk. */
export const DEFAULT_PREFIX_CACHE_BYTES: Readonly<Record<'ramBytes' | 'diskBytes', number>> = { ramBytes: 512 * 2 ** 20, diskBytes: 2 * 2 ** 30 };

/** Budgets of nothing: the prefix cache off. */
export const PREFIX_CACHE_OFF: Readonly<Record<'ramBytes' | 'diskBytes', number>> = { ramBytes: 0, diskBytes: 0 };

const bytes = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** The budgets as a config sets them: either may be left out (its default), 0 turns its tier off. */
export const prefixCacheBudgetsSchema = z.object({ ramBytes: bytes, diskBytes: bytes }).partial().strict();
export type PrefixCacheBudgets = z.infer<typeof prefixCacheBudgetsSchema>;

/** What the engine is loaded with: the budgets with their defaults, and where the disk tier lives. */
export const prefixCacheOptionsSchema = z.object({
  ramBytes: bytes.default(DEFAULT_PREFIX_CACHE_BYTES.ramBytes),
  diskBytes: bytes.default(DEFAULT_PREFIX_CACHE_BYTES.diskBytes),
  /** The disk tier's folder (core: `<data dir>/prefix-cache`); absent: under the system's temp folder. */
  diskDir: z.string().min(1).optional(),
});
export type PrefixCacheOptions = z.infer<typeof prefixCacheOptionsSchema>;

const count = z.number().int().nonnegative();

/** A saved entry changed tier: made from `fromSlot`'s evicted tokens (`tokens` of them, a state of `bytes`), spilled, or dropped (`tier: null`). */
export const tierMoveSchema = z.object({
  entry: count,
  tier: prefixTierSchema.nullable(),
  fromSlot: count.optional(),
  tokens: count.optional(),
  bytes: count.optional(),
});
export type TierMove = z.infer<typeof tierMoveSchema>;

export const prefixCacheReportSchema = z.object({
  /** In the order they happened (engine-wide since the last report: another request's moves may be among them). */
  moves: z.array(tierMoveSchema),
  /** The saved entry this request's slot was restored from (it leaves the cache: the slot holds it now). */
  restored: z
    .object({
      entry: count,
      tier: prefixTierSchema,
      tokens: count,
      ms: z.number().nonnegative(),
      /**
       * The entry stays its owner's (`entry` is the owner's id; this engine's cache is unchanged): borrowed from
       * another replica's entry, or restored from a llama-server child's own slot file, which stays lent.
       */
      borrowed: z.literal(true).optional(),
    })
    .optional(),
});
export type PrefixCacheReport = z.infer<typeof prefixCacheReportSchema>;
/** A restore as a `started` report names it. */
export type PrefixRestoreReport = NonNullable<PrefixCacheReport['restored']>;

/** The folder of each tier of one engine's prefix cache (core names them to another engine in a borrow hint). */
const prefixCacheDirsSchema = z.object({ ram: z.string().min(1), disk: z.string().min(1) });

/**
 * What another engine needs to borrow from one engine's prefix cache, as its ready info reports it: its
 * tier folders, and the layout its states are saved under (the model file and the context's layout; a
 * state loads only into a context of the same, so core lets replicas of equal layouts borrow from each other).
 */
export const prefixCacheShareSchema = z.object({ dirs: prefixCacheDirsSchema, layout: z.string().min(1) });
export type PrefixCacheShare = z.infer<typeof prefixCacheShareSchema>;

/**
 * A generate request's borrow hint: another local replica of the same model and context layout saved
 * `entry` (in `tier`, as core last heard) in its cache folders `dirs`; the engine may restore it instead of
 * prefilling. A hint is only a hint: an entry gone by the time the engine looks is prefilled.
 */
export const prefixBorrowSchema = z.object({ entry: count, tier: prefixTierSchema, dirs: prefixCacheDirsSchema });
export type PrefixBorrow = z.infer<typeof prefixBorrowSchema>;

/** A saved entry as the dashboard shows it: its tokens, its state's size, and the conversation it was (null when not known). */
export const savedEntryViewSchema = z.object({ entry: count, tokens: count, bytes: count, conversationId: z.string().nullable() });
export type SavedEntryView = z.infer<typeof savedEntryViewSchema>;

/** One tier of a replica's prefix cache as core's exact index mirrors it: its entries (most recent last), their bytes, its budget. */
export const prefixTierViewSchema = z.object({ tier: prefixTierSchema, entries: z.array(savedEntryViewSchema), bytes: count, budgetBytes: count });
export type PrefixTierView = z.infer<typeof prefixTierViewSchema>;

/**
 * A llama-server child's host-memory prompt cache (`--cache-ram`) as core mirrors it: the bytes it may give
 * to evicted conversations, and one token's KV state by the model's shape.
 */
export interface HostPromptCacheLimits {
  readonly budgetBytes: number;
  readonly bytesPerToken: number;
}

/**
 * llama-server's `--slot-prompt-similarity` for a child: its default, given explicitly because core's
 * mirror of the child's prompt cache replays the slot choice it governs (an idle slot sharing more than
 * this share of a prompt is picked for it; failing one, the least recently used).
 */
export const LLAMA_SERVER_SLOT_PROMPT_SIMILARITY = 0.1;
