/**
 * The tokenizer protocol: every message between core and a tokenizer child, as zod schemas of unions
 * tagged by `type`. Requests carry an `id`; each reply carries the id of the request it answers (the child
 * serves requests in the order they arrive, but replies are still matched by id). Both sides parse what
 * they receive with these schemas.
 */
import { z } from 'zod';
import { tokenIdsSchema } from './token-ids.js';
import { toolSupportSchema } from './tool-calls/tool-call-format.js';

const requestId = z.number().int().nonnegative();

const tokenIds = tokenIdsSchema();

/** A call in an assistant turn as the client sent it (`arguments` JSON text; the child parses it for templates that read objects). */
const templateToolCallSchema = z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) });

/**
 * A chat turn as OpenAI and chat templates name its fields: `reasoning_content` (an assistant's
 * thinking), `name`, `tool_calls` (assistant) and `tool_call_id` (role `tool`).
 */
export const chatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  reasoning_content: z.string().optional(),
  name: z.string().optional(),
  tool_calls: z.array(templateToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;
export type ChatRole = ChatMessage['role'];

/** An assistant message of the request whose text is an answer an engine sampled, and the ids it sampled. */
const sampledAnswerSchema = z.object({ message: z.number().int().nonnegative(), tokens: tokenIds });
export type SampledAnswer = z.infer<typeof sampledAnswerSchema>;

/** The tags a thinking template puts around its reasoning (engine-bin/template-reasoning.ts); either may be empty. */
export const thinkingTagsSchema = z.object({
  start: z.string(),
  end: z.string(),
  /** Markers that also end the thinking and begin the answer (kept in it): the tool calls of Qwen3.5's and DeepSeek V3.2's formats. */
  endBefore: z.array(z.string()).optional(),
  /**
   * What stands around the answer, dropped from the content: one of `headers` where it starts (gpt-oss's
   * final channel, Command R7B's `<|START_RESPONSE|>`), and `end` after it (`<|END_RESPONSE|>`).
   */
  answer: z.object({ headers: z.array(z.string().min(1)).min(1), end: z.string().min(1).optional() }).optional(),
});
export type ThinkingTags = z.infer<typeof thinkingTagsSchema>;

/** What a chat request sets of its template: thinking on or off, `chat_template_kwargs`, `reasoning_effort`. */
export const chatTemplateOptionsSchema = z.object({
  enableThinking: z.boolean().optional(),
  kwargs: z.record(z.string(), z.unknown()).optional(),
  reasoningEffort: z.string().optional(),
});
export type ChatTemplateOptions = z.infer<typeof chatTemplateOptionsSchema>;

export const tokenizerRequestSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('open'),
    id: requestId,
    modelPath: z.string().min(1),
    /** Also load the weights once (CPU, mapped) and free them: catches what only fires at tensor creation. */
    probeWeights: z.boolean(),
    /** Test-only: skip the header bounds so a hostile file reaches llama.cpp; no config or API reaches it. */
    testOnlySkipHeaderCheck: z.boolean().optional(),
  }),
  z.object({ type: z.literal('tokenize'), id: requestId, text: z.string(), special: z.boolean(), addBos: z.boolean() }),
  z.object({ type: z.literal('tokenizePrompt'), id: requestId, text: z.string() }),
  z.object({ type: z.literal('detokenize'), id: requestId, tokens: tokenIds }),
  /** Each token's own text, control tokens written out (llama-server's `with_pieces`). */
  z.object({ type: z.literal('pieces'), id: requestId, tokens: tokenIds }),
  /** `tools`: OpenAI tool objects for the template's `tools` variable (only for a template that renders them). */
  z.object({
    type: z.literal('applyChatTemplate'),
    id: requestId,
    messages: z.array(chatMessageSchema),
    addGenerationPrompt: z.boolean(),
    tools: z.array(z.record(z.string(), z.unknown())).optional(),
    /** Thinking and template variables as the request sets them (llama-server's names). */
    options: chatTemplateOptionsSchema.optional(),
    /**
     * Assistant messages whose text is an answer core remembers the sampled ids of
     * (core/tokenizer/sampled-answers.ts), in message order: those ids stand for that text.
     */
    answers: z.array(sampledAnswerSchema).optional(),
  }),
  /** GBNF for a JSON schema in node-llama-cpp's terms (common/json-schema-subset.ts); null asks for any JSON object. */
  z.object({ type: z.literal('jsonSchemaGrammar'), id: requestId, schema: z.record(z.string(), z.unknown()).nullable() }),
  z.object({ type: z.literal('shutdown'), id: requestId }),
]);
export type TokenizerRequest = z.infer<typeof tokenizerRequestSchema>;
export const TOKENIZER_REQUEST_TYPES = tokenizerRequestSchema.options.map((o) => o.shape.type.value);

/** What the child is doing while it opens a model (a crash report names the stage). */
export const openStageSchema = z.enum(['header', 'template', 'vocabulary', 'weights']);
export type OpenStage = z.infer<typeof openStageSchema>;

export const TOKENIZER_ERROR_CODES = [
  'bad_message',
  'unknown_type',
  'model_not_found',
  /** The header check refused the file (format or hyper-parameter bounds). */
  'model_invalid',
  'template_invalid',
  /** node-llama-cpp refused the vocabulary. */
  'load_failed',
  /** The weights probe failed: the vocabulary loads, the model itself would not. */
  'probe_failed',
  'not_open',
  'already_open',
  /** The chat template failed on these messages (the caller's input). */
  'template_failed',
  /** node-llama-cpp could not make a grammar of the JSON schema (the caller's input). */
  'schema_failed',
  /** Anything else that threw in the child. */
  'internal_error',
] as const;
export const tokenizerErrorCodeSchema = z.enum(TOKENIZER_ERROR_CODES);
export type TokenizerErrorCode = z.infer<typeof tokenizerErrorCodeSchema>;

export const tokenizerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stage'), id: requestId, stage: openStageSchema }),
  z.object({
    type: z.literal('opened'),
    id: requestId,
    hasModelTemplate: z.boolean(),
    probeMs: z.number().nullable(),
    toolSupport: toolSupportSchema,
    /** The template's thinking tags; null when it does not think. */
    thinking: thinkingTagsSchema.nullable(),
    /** Control tokens an engine must write out in its text, so core can read the thinking tags and tool calls (llama-server's `preserved_tokens`). */
    preservedTokens: z.array(z.string()),
  }),
  z.object({ type: z.literal('grammar'), id: requestId, grammar: z.string() }),
  z.object({ type: z.literal('tokens'), id: requestId, tokens: tokenIds }),
  z.object({ type: z.literal('text'), id: requestId, text: z.string() }),
  z.object({ type: z.literal('pieces'), id: requestId, pieces: z.array(z.string()) }),
  /** `thinkingOpen`: the prompt ends inside the model's thinking (its generation prompt opened it), so the answer starts there. */
  z.object({ type: z.literal('templated'), id: requestId, text: z.string(), tokens: tokenIds, thinkingOpen: z.boolean() }),
  z.object({ type: z.literal('stopping'), id: requestId }),
  z.object({ type: z.literal('error'), id: requestId.nullable(), code: tokenizerErrorCodeSchema, message: z.string() }),
]);
export type TokenizerMessage = z.infer<typeof tokenizerMessageSchema>;
export type TokenizerMessageOf<T extends TokenizerMessage['type']> = Extract<TokenizerMessage, { type: T }>;
