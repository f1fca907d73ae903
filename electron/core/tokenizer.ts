/**
 * Core's tokenizer: a `vocabOnly` node-llama-cpp model that turns text and OpenAI-style chat messages into
 * token ids before an engine is chosen (the router needs ids). The chat template is the model's own
 * `tokenizer.chat_template`, rendered with Jinja as llama-server does; a model without one gets ChatML.
 * The file is checked by our bounded header reader before native code opens it.
 */
import { Template } from '@huggingface/jinja';
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from 'node-llama-cpp';
import { CHATML_TEMPLATE } from '../../common/chat-templates.js';
import { GgufFormatError } from '../../common/gguf/header-reader.js';
import { readGgufFileHeader } from '../../common/node/gguf-file.js';

export type ChatRole = 'system' | 'user' | 'assistant';
export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export class TokenizerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenizerError';
  }
}

export class Tokenizer {
  private constructor(
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly template: Template,
    /** Whether the template came from the model (false: the ChatML fallback). */
    readonly hasModelTemplate: boolean,
  ) {}

  static async open(modelPath: string): Promise<Tokenizer> {
    let templateSource: string | undefined;
    try {
      const value = (await readGgufFileHeader(modelPath)).metadata.get('tokenizer.chat_template');
      if (typeof value === 'string') templateSource = value;
    } catch (error) {
      const reason = error instanceof GgufFormatError ? `not a usable GGUF model: ${error.message}` : (error as Error).message;
      throw new TokenizerError(`cannot open the tokenizer of ${modelPath}: ${reason}`);
    }
    let template: Template;
    try {
      template = new Template(templateSource ?? CHATML_TEMPLATE);
    } catch (error) {
      throw new TokenizerError(`the chat template of ${modelPath} does not parse: ${(error as Error).message}`);
    }
    const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.error });
    const model = await llama.loadModel({ modelPath, vocabOnly: true }).catch(async (error: Error) => {
      await llama.dispose();
      throw new TokenizerError(`cannot load the vocabulary of ${modelPath}: ${error.message}`);
    });
    return new Tokenizer(llama, model, template, templateSource !== undefined);
  }

  /** Token ids of `text`; with `special`, control-token text such as `<|im_start|>` becomes those tokens. */
  tokenize(text: string, options: { special?: boolean; addBos?: boolean } = {}): number[] {
    const tokens = this.model.tokenize(text, options.special ?? false) as number[];
    const bos = this.model.tokens.bos as number | null;
    const addBos = options.addBos ?? false;
    return addBos && bos !== null && tokens[0] !== bos ? [bos, ...tokens] : tokens;
  }

  detokenize(tokens: readonly number[]): string {
    return this.model.detokenize(tokens as Token[]);
  }

  /** The model's chat template applied to `messages`, ending with the assistant's turn opened. */
  applyChatTemplate(messages: readonly ChatMessage[], options: { addGenerationPrompt?: boolean } = {}): { text: string; tokens: number[] } {
    let text: string;
    try {
      text = this.template.render({
        messages,
        add_generation_prompt: options.addGenerationPrompt ?? true,
        bos_token: this.model.tokens.bosString ?? '',
        eos_token: this.model.tokens.eosString ?? '',
      });
    } catch (error) {
      throw new TokenizerError(`the chat template failed on these messages: ${(error as Error).message}`);
    }
    return { text, tokens: this.tokenize(text, { special: true, addBos: this.model.tokens.shouldPrependBosToken }) };
  }

  /** The text of a completion prompt as the model expects it (BOS when the model wants one). */
  tokenizePrompt(text: string): number[] {
    return this.tokenize(text, { special: false, addBos: this.model.tokens.shouldPrependBosToken });
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
    await this.llama.dispose();
  }
}
