/**
 * The models folder as the Models page and `manifold ls` show it: each model with its metadata, whether
 * it is the one loaded, and the layout the loader suggests for it (replicas × context × slots).
 */
import { z } from 'zod';

export const layoutSuggestionSchema = z.object({
  replicas: z.number().int(),
  contextSize: z.number().int(),
  slots: z.number().int(),
  /** `cpu` for CPU engines; else the cards the replicas split (null: the detected cards). */
  device: z.enum(['gpu', 'cpu']),
  /** Why this layout, in words. */
  reason: z.string(),
});
export type LayoutSuggestion = z.infer<typeof layoutSuggestionSchema>;

export const libraryEntrySchema = z.object({
  path: z.string(),
  file: z.string(),
  /** All its files (the parts of a split model) together. */
  bytes: z.number(),
  name: z.string().nullable(),
  architecture: z.string().nullable(),
  parameters: z.number().nullable(),
  quantisation: z.string().nullable(),
  contextLength: z.number().int().nullable(),
  loaded: z.boolean(),
  /** Why its header could not be read; null when it is fine. */
  error: z.string().nullable(),
  suggested: layoutSuggestionSchema.nullable(),
});
export type LibraryEntry = z.infer<typeof libraryEntrySchema>;
