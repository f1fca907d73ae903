/**
 * A chat-window conversation as core stores it and the renderer shows it: its messages (with the replica and
 * slot that served each answer, the calls an answer made, the earlier answers kept when it was regenerated),
 * its sampling settings, and its summary in the list. The contract (contract.ts) carries these.
 */
import { z } from 'zod';

/** Sampling settings of a conversation, in the chat window's words. */
const chatSamplingFields = {
  // OpenAI's range; a conversation saved with more (the window allowed 5 once) is read as 2.
  temperature: z.preprocess((t) => (typeof t === 'number' && t > 2 ? 2 : t), z.number().min(0).max(2)),
  topP: z.number().min(0).max(1),
  topK: z.number().int().min(0).max(1000),
  maxTokens: z.number().int().min(1).max(32768),
  seed: z.number().int().nonnegative().nullable(),
  /** A thinking model's thinking: the template's default, off, or on with a reasoning effort (gpt-oss reads it; others think as by default). */
  thinking: z.enum(['default', 'off', 'low', 'medium', 'high']),
  /** The most tokens it may think before its answer; null for no bound. */
  thinkingBudget: z.number().int().min(0).max(32768).nullable(),
};
export const chatSamplingSchema = z.object({
  temperature: chatSamplingFields.temperature.default(0.8),
  topP: chatSamplingFields.topP.default(0.95),
  topK: chatSamplingFields.topK.default(40),
  maxTokens: chatSamplingFields.maxTokens.default(256),
  seed: chatSamplingFields.seed.default(null),
  thinking: chatSamplingFields.thinking.default('default'),
  thinkingBudget: chatSamplingFields.thinkingBudget.default(null),
});
/** A change of some sampling settings (no defaults: what is not named stays as it is). */
export const chatSamplingChangeSchema = z.object(chatSamplingFields).partial().strict();
export type ChatSampling = z.infer<typeof chatSamplingSchema>;

/** Which replica and slot served an answer, and how much of its prompt that slot already held. */
export const servedBySchema = z.object({
  replica: z.number().int(),
  slot: z.number().int().nullable(),
  reusedTokens: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  /** From sending to the first token, in milliseconds (answers from the window; absent in older files). */
  firstTokenMs: z.number().nonnegative().optional(),
  /** Tokens per second after the first (absent for an answer of one token). */
  tokensPerSecond: z.number().nonnegative().optional(),
});

/** A call an answer made (OpenAI's `tool_calls`, flattened): `arguments` is the JSON text the model wrote. */
export const chatToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
export type ChatToolCall = z.infer<typeof chatToolCallSchema>;

/** An earlier answer to the same question, kept when the user regenerated it (LM Studio's ‹ 1/2 ›). */
export const answerVersionSchema = z.object({
  content: z.string(),
  reasoning: z.string().optional(),
  thinkingMs: z.number().nonnegative().optional(),
  servedBy: servedBySchema.nullable().default(null),
  stopped: z.boolean().default(false),
  error: z.string().nullable().default(null),
});
export type AnswerVersion = z.infer<typeof answerVersionSchema>;

/** Earlier answers kept per question. */
export const MAX_ANSWER_VERSIONS = 20;

export const chatMessageSchema = z.object({
  id: z.string(),
  /** `tool`: a tool's result, in a conversation stored from the API (`store: true`). */
  role: z.enum(['user', 'assistant', 'tool']),
  content: z.string(),
  /** For an answer from a thinking model: its thinking, apart from its content (absent when it did not think). */
  reasoning: z.string().optional(),
  /** How long it thought, in milliseconds (with `reasoning`). */
  thinkingMs: z.number().nonnegative().optional(),
  /** For an answer: the tool calls it made (absent when none). */
  toolCalls: z.array(chatToolCallSchema).optional(),
  /** For a `tool` message: the id of the call it answers. */
  toolCallId: z.string().optional(),
  /** For an answer stored from the API: why it ended, OpenAI's finish reason. */
  finishReason: z.enum(['stop', 'length', 'tool_calls']).optional(),
  /** For an answer: who served it; null while it streams or when it failed. */
  servedBy: servedBySchema.nullable().default(null),
  /** For an answer: stopped by the user before it finished. */
  stopped: z.boolean().default(false),
  /** For an answer that failed: why. */
  error: z.string().nullable().default(null),
  /** For an answer: the earlier answers to the same question, oldest first (absent when it was never regenerated). */
  versions: z.array(answerVersionSchema).max(MAX_ANSWER_VERSIONS).optional(),
  /**
   * For an answer: `streaming` while it is written (it is saved as it streams), `interrupted` when the
   * process writing it stopped first (a crash, or a shutdown past its grace period): the part written
   * is kept and Regenerate is offered.
   */
  state: z.enum(['complete', 'streaming', 'interrupted']).default('complete'),
  /** While streaming: the run (one start of the process) writing it; another run reads it as interrupted. */
  writer: z.string().nullable().default(null),
});
export type ChatMessageData = z.infer<typeof chatMessageSchema>;

/** Where a conversation began: the chat window, or a chat completion sent with `store: true` (`api`). */
const conversationSourceSchema = z.enum(['window', 'api']);

export const conversationSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
  title: z.string().max(200),
  systemPrompt: z.string().max(20000),
  sampling: chatSamplingSchema,
  messages: z.array(chatMessageSchema),
  createdAt: z.number(),
  updatedAt: z.number(),
  source: conversationSourceSchema.default('window'),
});
export type Conversation = z.infer<typeof conversationSchema>;

/** A conversation in the list; a file that does not parse is listed as damaged, never as an empty chat. */
export const conversationSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  messages: z.number().int(),
  updatedAt: z.number(),
  source: conversationSourceSchema,
  /** Why its file could not be read (e.g. a torn write); null when it is fine. */
  damaged: z.string().nullable(),
});
export type ConversationSummary = z.infer<typeof conversationSummarySchema>;
