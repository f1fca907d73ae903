/**
 * Core's tokenizer: turns text and OpenAI-style chat messages into token ids before an engine is chosen
 * (the router needs ids). The work happens in a tokenizer child (engine-bin/tokenizer-main.ts) under a
 * supervisor: native code never reads the model file in the main process, and a long text never blocks
 * its event loop. The child renders the model's own `tokenizer.chat_template` with Jinja, as llama-server
 * does (ChatML when the model has none), parses control tokens in templated text, and prepends BOS when
 * the model asks for it. `open` with `probeWeights` is the loader's validation of a new model.
 */
import type { ChatMessage } from '../../common/tokenizer-protocol.js';
import type { ToolSupport } from '../../common/tool-calls/tool-call-format.js';
import { forkTokenizer } from './engine/engine-process.js';
import { TokenizerSupervisor, type TokenizerSupervisorOptions } from './tokenizer/tokenizer-supervisor.js';

export type { ChatMessage, ChatRole } from '../../common/tokenizer-protocol.js';
export { TokenizerError, TokenizerUnavailableError } from './tokenizer/tokenizer-errors.js';

export interface TokenizerOptions extends Partial<Omit<TokenizerSupervisorOptions, 'modelPath'>> {
  /** Also load the weights once in the child (CPU, mapped) and free them: the loader's validation. */
  probeWeights?: boolean;
}

export class Tokenizer {
  private constructor(
    private readonly supervisor: TokenizerSupervisor,
    /** Whether the template came from the model (false: the ChatML fallback). */
    readonly hasModelTemplate: boolean,
    /** The template's tool-call format, and whether it renders `tools` itself (common/tool-calls/tool-call-format.ts). */
    readonly toolSupport: ToolSupport,
  ) {}

  /** Starts a tokenizer child on `modelPath`; rejects with TokenizerError naming why the model does not open. */
  static async open(modelPath: string, options: TokenizerOptions = {}): Promise<Tokenizer> {
    const { probeWeights = false, ...rest } = options;
    const supervisor = new TokenizerSupervisor({ spawn: forkTokenizer, log: () => {}, ...rest, modelPath });
    const opened = await supervisor.start(probeWeights);
    return new Tokenizer(supervisor, opened.hasModelTemplate, opened.toolSupport);
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

  /** The model's chat template applied to `messages`, ending with the assistant's turn opened; `tools` go in the template's `tools` variable. */
  async applyChatTemplate(
    messages: readonly ChatMessage[],
    options: { addGenerationPrompt?: boolean; tools?: readonly Record<string, unknown>[] } = {},
  ): Promise<{ text: string; tokens: number[] }> {
    const { addGenerationPrompt = true, tools } = options;
    const reply = await this.supervisor.call({ type: 'applyChatTemplate', messages: [...messages], addGenerationPrompt, ...(tools ? { tools: [...tools] } : {}) }, 'templated');
    return { text: reply.text, tokens: reply.tokens };
  }

  /**
   * GBNF for a JSON schema already in node-llama-cpp's terms (common/json-schema-subset.ts), made by its
   * JSON-schema grammar in the child (core does not load node-llama-cpp); null asks for any JSON object.
   */
  async jsonSchemaGrammar(schema: Record<string, unknown> | null): Promise<string> {
    return (await this.supervisor.call({ type: 'jsonSchemaGrammar', schema }, 'grammar')).grammar;
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
