/**
 * What the chat service needs of the workstation, and nothing more: the loaded model's chat template
 * and a generation through the router. The workstation implements it; chat/ never imports the
 * workstation (the layering lint forbids it), so the two do not import each other.
 */
import type { GenerateRequestInput } from '../../common/engine-protocol.js';
import type { ChatMessage, ChatTemplateOptions, ThinkingTags } from '../../common/tokenizer-protocol.js';

/** A generation's result as the chat records it: the text and who served it. */
export interface ChatGeneration {
  text: string;
  replica: number;
  /** The slot numbered across all replicas; null when the request never reached a slot. */
  globalSlot: number | null;
  reusedTokens: number;
  usage: { promptTokens: number; completionTokens: number };
}

export interface ChatBackend {
  /** The loaded model's tokenizer; throws (with why) when no model is loaded. */
  readonly tokenizer: {
    /** `thinkingOpen`: the prompt ends inside the model's thinking. */
    applyChatTemplate(
      messages: readonly ChatMessage[],
      options?: { template?: ChatTemplateOptions },
    ): { tokens: number[]; thinkingOpen?: boolean } | Promise<{ tokens: number[]; thinkingOpen?: boolean }>;
    /** The template's thinking tags (null: it does not think), and the control tokens engines write out for them. */
    readonly thinking: ThinkingTags | null;
    readonly preservedTokens: readonly string[];
    /** GBNF for a JSON schema (null: any JSON object); rejects naming a keyword the grammar cannot express. */
    jsonSchemaGrammar(schema: Record<string, unknown> | null): Promise<string>;
  };
  /** Where the chat reports what it could not do (an answer not saved). */
  readonly log: { warn(line: string): void };
  generate(request: GenerateRequestInput, options: { signal: AbortSignal; onTokens: (chunk: { text: string }) => void }): Promise<ChatGeneration>;
}
