/**
 * Core's tokenizer: turns text and OpenAI-style chat messages into token ids before an engine is chosen
 * (the router needs ids). The work happens in a tokenizer child (engine-bin/tokenizer-main.ts) under a
 * supervisor: native code never reads the model file in the main process, and a long text never blocks
 * its event loop. The child renders the model's own `tokenizer.chat_template` with Jinja, as llama-server
 * does (ChatML when the model has none), parses control tokens in templated text, and prepends BOS when
 * the model asks for it. `open` with `probeWeights` is the loader's validation of a new model.
 */
import type { ChatMessage, ChatTemplateOptions, ThinkingTags } from '../common/tokenizer-protocol.js';
import type { ToolSupport } from '../common/tool-calls/tool-call-format.js';
import { checkJsonSchema } from '../common/json-schema-subset.js';
import { forkTokenizer } from './engine/engine-process.js';
import { TokenizerSupervisor, type TokenizerSupervisorOptions } from './tokenizer/tokenizer-supervisor.js';

export type { ChatMessage, ChatRole } from '../common/tokenizer-protocol.js';
import { UnsupportedSchemaError } from './tokenizer/tokenizer-errors.js';
import { LruMap } from '../common/lru-map.js';
import { SampledAnswers } from './tokenizer/sampled-answers.js';
export { TokenizerError, TokenizerUnavailableError, UnsupportedSchemaError } from './tokenizer/tokenizer-errors.js';

export interface TokenizerOptions extends Partial<Omit<TokenizerSupervisorOptions, 'modelPath'>> {
  /** Also load the weights once in the child (CPU, mapped) and free them: the loader's validation. */
  probeWeights?: boolean;
}

/** How many schemas' grammars a tokenizer keeps (least recently used out first). */
const KEPT_SCHEMA_GRAMMARS = 32;

export class Tokenizer {
  /** Grammars of recent schemas, by their normalized JSON. */
  private readonly schemaGrammars = new LruMap<string, string>(KEPT_SCHEMA_GRAMMARS);
  private readonly sampledAnswers = new SampledAnswers();

  private constructor(
    private readonly supervisor: TokenizerSupervisor,
    /** Whether the template came from the model (false: the ChatML fallback). */
    readonly hasModelTemplate: boolean,
    /** The template's tool-call format, and whether it renders `tools` itself (common/tool-calls/tool-call-format.ts). */
    readonly toolSupport: ToolSupport,
    /** The template's thinking tags; null when it does not think. */
    readonly thinking: ThinkingTags | null,
    /** Control tokens an engine writes out in its text so the thinking tags can be read. */
    readonly preservedTokens: readonly string[],
  ) {}

  /** Starts a tokenizer child on `modelPath`; rejects with TokenizerError naming why the model does not open. */
  static async open(modelPath: string, options: TokenizerOptions = {}): Promise<Tokenizer> {
    const { probeWeights = false, ...rest } = options;
    const supervisor = new TokenizerSupervisor({ spawn: forkTokenizer, log: () => {}, ...rest, modelPath });
    const opened = await supervisor.start(probeWeights);
    return new Tokenizer(supervisor, opened.hasModelTemplate, opened.toolSupport, opened.thinking, opened.preservedTokens);
  }

  /** Token ids of `text`; with `special`, control-token text such as `<|im_start|>` becomes those tokens. */
  async tokenize(text: string, options: { special?: boolean; addBos?: boolean } = {}): Promise<number[]> {
    const reply = await this.supervisor.call({ type: 'tokenize', text, special: options.special ?? false, addBos: options.addBos ?? false }, 'tokens');
    return reply.tokens;
  }

  async detokenize(tokens: readonly number[]): Promise<string> {
    return (await this.supervisor.call({ type: 'detokenize', tokens: [...tokens] }, 'text')).text;
  }

  /** Each token's own text (with its leading space; control tokens written out), as llama-server's `with_pieces` gives it. */
  async pieces(tokens: readonly number[]): Promise<string[]> {
    return (await this.supervisor.call({ type: 'pieces', tokens: [...tokens] }, 'pieces')).pieces;
  }

  /**
   * The model's chat template applied to `messages`, ending with the assistant's turn opened; `tools` go
   * in the template's `tools` variable. An assistant turn whose text is an answer an engine sampled
   * (rememberAnswer) keeps its sampled ids in the tokens (tokenizer/sampled-answers.ts).
   */
  async applyChatTemplate(
    messages: readonly ChatMessage[],
    options: { addGenerationPrompt?: boolean; tools?: readonly Record<string, unknown>[]; template?: ChatTemplateOptions } = {},
  ): Promise<{ text: string; tokens: number[]; thinkingOpen: boolean }> {
    const { addGenerationPrompt = true, tools, template } = options;
    const answers = messages.flatMap((m, message) => {
      const tokens = m.role === 'assistant' ? this.sampledAnswers.idsOf(m.content) : undefined;
      return tokens ? [{ message, tokens }] : [];
    });
    const reply = await this.supervisor.call(
      {
        type: 'applyChatTemplate',
        messages: [...messages],
        addGenerationPrompt,
        ...(tools ? { tools: [...tools] } : {}),
        ...(answers.length ? { answers } : {}),
        ...(template ? { options: template } : {}),
      },
      'templated',
    );
    return { text: reply.text, tokens: reply.tokens, thinkingOpen: reply.thinkingOpen };
  }

  /** Remembers the ids an engine sampled for an answer, so a later turn holding its text holds them too. */
  rememberAnswer(text: string, tokens: readonly number[]): void {
    this.sampledAnswers.remember(text, tokens);
  }

  /**
   * GBNF for a JSON schema (null: any JSON object): checked against what node-llama-cpp's JSON-schema
   * grammar expresses and put in its terms (common/json-schema-subset.ts; UnsupportedSchemaError names the
   * first keyword outside it), then made by that grammar in the child (core does not load
   * node-llama-cpp). The last few are kept: clients send the same schema turn after turn.
   */
  async jsonSchemaGrammar(schema: Record<string, unknown> | null): Promise<string> {
    let normalized: Record<string, unknown> | null = null;
    if (schema !== null) {
      const checked = checkJsonSchema(schema);
      if (!checked.ok) throw new UnsupportedSchemaError(checked.message, checked.keyword);
      normalized = checked.schema;
    }
    const key = JSON.stringify(normalized);
    const kept = this.schemaGrammars.get(key);
    if (kept !== undefined) return kept;
    const { grammar } = await this.supervisor.call({ type: 'jsonSchemaGrammar', schema: normalized }, 'grammar');
    this.schemaGrammars.set(key, grammar);
    return grammar;
  }

  /** The text of a completion prompt as the model expects it (BOS when the model wants one). */
  async tokenizePrompt(text: string): Promise<number[]> {
    return (await this.supervisor.call({ type: 'tokenizePrompt', text }, 'tokens')).tokens;
  }

  /** What a restart of the child opens (the shared arena's path once it is filled). */
  reopenFrom(modelPath: string): void {
    this.supervisor.reopenFrom(modelPath);
  }

  /** The child's pid (tests signal it). */
  get pid(): number | undefined {
    return this.supervisor.pid;
  }

  /** Sends a signal to the child (tests use SIGKILL and SIGSTOP to stand in for real failures). */
  signal(signal: NodeJS.Signals): void {
    this.supervisor.signal(signal);
  }

  async dispose(): Promise<void> {
    await this.supervisor.stop();
  }
}
