/**
 * The OpenAI-compatible request bodies, as zod schemas. Fields OpenAI clients send that Manifold does not
 * use are accepted and ignored (as llama-server does); `top_k`, `min_p`, `repeat_penalty`,
 * `ignore_eos` and `return_tokens` are llama-server's extensions.
 */
import { z } from 'zod';

const stopSchema = z.union([z.string().min(1), z.array(z.string().min(1)).max(16)]).nullish();

const samplingFields = {
  model: z.string().optional(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nonnegative().nullish(),
  repeat_penalty: z.number().min(0).max(10).nullish(),
  stop: stopSchema,
  n: z.literal(1).nullish(),
  ignore_eos: z.boolean().nullish(),
  /** llama-server's `return_tokens`: the completion's token ids in the response (`manifold.tokens`). */
  return_tokens: z.boolean().nullish(),
};

const contentPartSchema = z.object({ type: z.literal('text'), text: z.string() });

export const chatMessageSchema = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content: z.union([z.string(), z.array(contentPartSchema)]).nullable(),
});

export const chatCompletionRequestSchema = z.object({
  ...samplingFields,
  messages: z.array(chatMessageSchema).min(1),
  max_completion_tokens: z.number().int().min(1).nullish(),
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

export const completionRequestSchema = z.object({
  ...samplingFields,
  prompt: z.union([z.string(), z.array(z.string()).length(1), z.array(z.number().int().nonnegative()).min(1)]),
});
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

export type SamplingRequest = ChatCompletionRequest | CompletionRequest;
