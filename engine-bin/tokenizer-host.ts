/**
 * The tokenizer child's model: one GGUF opened as a `vocabOnly` node-llama-cpp model with its chat template
 * (the model's own `tokenizer.chat_template` rendered with Jinja, as llama-server does; ChatML when it has
 * none). Opening runs our bounded header check first, then the vocabulary load, then (when asked) a weights
 * probe: the model loaded once on the CPU, mapped, and freed, which reaches what llama.cpp only checks at
 * tensor creation. Any of these may abort this process: that is why it is a child.
 */
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from 'node-llama-cpp';
import { CHATML_TEMPLATE } from '../common/chat-templates.js';
import { GgufFormatError, metadataText, type GgufHeader } from '../common/gguf/header-reader.js';
import { ModelFileError, readGgufFileHeader, readModelFileHeader } from '../common/node/gguf-file.js';
import type { ChatMessage, ChatTemplateOptions, OpenStage, ThinkingTags, SampledAnswer, TokenizerErrorCode } from '../common/tokenizer-protocol.js';
import { toolSupportOf, type ToolSupport } from '../common/tool-calls/tool-call-format.js';
import { formatMarkers, markerPieces, thinkingEndsBefore } from '../common/tool-calls/tool-call-parsing.js';
import { ChatTemplate, TemplateRenderError, templateErrorWords, type CompiledTemplate } from './chat-template.js';
import { answerWrapper } from './template-reasoning.js';
import { jsonSchemaGrammar } from './json-schema-grammar.js';
import { spliceSampledAnswers, type AnswerAnchor } from './sampled-answer-splice.js';

/** How long a failed load waits for llama.cpp's error line, which says why (node-llama-cpp's error does not). */
const NATIVE_LOG_GRACE_MS = 200;

export class TokenizerFailure extends Error {
  constructor(
    readonly code: TokenizerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TokenizerFailure';
  }
}

export interface OpenRequest {
  modelPath: string;
  probeWeights: boolean;
  testOnlySkipHeaderCheck?: boolean | undefined;
}

interface Opened {
  llama: Llama;
  model: LlamaModel;
  template: ChatTemplate;
}

export class TokenizerHost {
  private opened: Opened | undefined;
  private opening = false;
  /** The last error llama.cpp logged: node-llama-cpp's own errors ("Failed to load model") do not say why. */
  private lastNativeError: string | undefined;

  constructor(private readonly log: (line: string) => void) {}

  async open(
    request: OpenRequest,
    onStage: (stage: OpenStage) => void,
  ): Promise<{ hasModelTemplate: boolean; probeMs: number | null; toolSupport: ToolSupport; thinking: ThinkingTags | null; preservedTokens: string[] }> {
    if (this.opened || this.opening) throw new TokenizerFailure('already_open', 'this tokenizer process has already opened a model');
    this.opening = true;
    const { modelPath } = request;
    try {
      onStage('header');
      const header = await checkHeader(modelPath, request.testOnlySkipHeaderCheck === true);
      const templateSource = metadataText(header, 'tokenizer.chat_template');
      onStage('vocabulary');
      const llama = await getLlama({
        gpu: false,
        build: 'never',
        progressLogs: false,
        logLevel: LlamaLogLevel.error,
        logger: (level, message) => this.logNative(level, message),
      });
      // A failed open frees nothing here: the supervisor ends this child when the open fails, and
      // node-llama-cpp 3.21.1's llama.dispose() after a failed load hangs now and then (2 runs in 30).
      const model = await this.load(llama, { modelPath, vocabOnly: true }, 'load_failed', 'cannot load the vocabulary');
      onStage('template');
      const template = openTemplate(llama, model, templateSource ?? CHATML_TEMPLATE);
      let probeMs: number | null = null;
      if (request.probeWeights) {
        onStage('weights');
        const started = performance.now();
        const weights = await this.load(llama, { modelPath, gpuLayers: 0, useMmap: true }, 'probe_failed', 'the weights do not load');
        await weights.dispose();
        probeMs = performance.now() - started;
      }
      this.opened = { llama, model, template };
      const toolSupport = toolSupportOf(templateSource, template.caps);
      const endBefore = thinkingEndsBefore(toolSupport.format);
      const answer = answerWrapper(templateSource ?? '');
      const thinking = template.thinking ? { ...template.thinking, ...(endBefore.length > 0 ? { endBefore } : {}), ...(answer ? { answer } : {}) } : null;
      return {
        hasModelTemplate: templateSource !== null,
        probeMs,
        toolSupport,
        thinking,
        preservedTokens: this.preservedTokens(thinking, formatMarkers(toolSupport.format)),
      };
    } finally {
      this.opening = false;
    }
  }

  /** Token ids of `text`; with `special`, control-token text such as `<|im_start|>` becomes those tokens. */
  tokenize(text: string, special: boolean, addBos: boolean): number[] {
    const { model } = this.need();
    const tokens = model.tokenize(text, special) as number[];
    const bos = model.tokens.bos as number | null;
    return addBos && bos !== null && tokens[0] !== bos ? [bos, ...tokens] : tokens;
  }

  detokenize(tokens: readonly number[]): string {
    return this.need().model.detokenize(tokens as Token[]);
  }

  /**
   * Each token's own text with its leading space (llama.cpp's token-to-piece): detokenized after itself, so
   * the start-of-text rule that drops a leading space does not apply; control tokens written out.
   */
  pieces(tokens: readonly number[]): string[] {
    const { model } = this.need();
    return tokens.map((token) => model.detokenize([token as Token], true, [token as Token]));
  }

  /**
   * The chat template applied to `messages` (with `tools` in its `tools` variable when given) and
   * tokenized with control tokens parsed (BOS when the model wants one). Each of `answers` (assistant
   * messages core remembers the sampled ids of) keeps those ids where its text stands, which is where the
   * prompt that asked for it ended, and the text around them is tokenized piece by piece
   * (engine-bin/sampled-answer-splice.ts): the prompt then holds what the engine's KV cache holds after that answer.
   */
  applyChatTemplate(
    messages: readonly ChatMessage[],
    addGenerationPrompt: boolean,
    tools?: readonly Record<string, unknown>[],
    answers: readonly SampledAnswer[] = [],
    options: ChatTemplateOptions = {},
  ): { text: string; tokens: number[]; thinkingOpen: boolean } {
    const { model, template } = this.need();
    const render = (turns: readonly ChatMessage[]): string => this.render(turns, addGenerationPrompt, tools, options);
    const text = render(messages);
    const anchors = answers.length > 0 ? this.anchorsOf(text, messages, render, answers) : [];
    const pieces = spliceSampledAnswers(text, anchors, (ids) => this.sampledTextOf(ids));
    const tokens = pieces.flatMap((piece, i) =>
      typeof piece === 'string' ? this.tokenize(piece, true, i === 0 && model.tokens.shouldPrependBosToken) : piece,
    );
    return { text, tokens, thinkingOpen: addGenerationPrompt && endsInThinking(text, template.thinking) };
  }

  /**
   * Where each remembered answer's text stands in `text`: the messages rendered once more with a marker in
   * place of each such answer, each marker's place moved by how much longer the answers before it are than
   * their markers. None when the template renders a marker other than once (it transforms or repeats the
   * text). An answer is left out unless `text` holds it there and what follows it is empty or starts with a
   * control token, where tokenizing the whole text starts a new fragment too (a space-prefixing vocabulary
   * would add a space to text tokenized on its own).
   */
  private anchorsOf(
    text: string,
    messages: readonly ChatMessage[],
    render: (turns: readonly ChatMessage[]) => string,
    answers: readonly SampledAnswer[],
  ): AnswerAnchor[] {
    const { model } = this.need();
    const marked = new Map(
      answers.filter(({ message }) => messages[message]?.role === 'assistant' && messages[message].content !== '').map((answer) => [answer.message, answer]),
    );
    const markerOf = (message: number): string => `\u{F8FF}manifold answer ${message}\u{F8FF}`;
    let markedText: string;
    try {
      markedText = render(messages.map((m, i) => (marked.has(i) ? { ...m, content: markerOf(i) } : m)));
    } catch {
      return [];
    }
    const places = [...marked.keys()].map((message) => ({ message, at: markedText.indexOf(markerOf(message)) }));
    if (places.some(({ message, at }) => at < 0 || markedText.includes(markerOf(message), at + 1))) return [];
    const anchors: AnswerAnchor[] = [];
    let shift = 0;
    for (const { message, at } of places.sort((a, b) => a.at - b.at)) {
      const answer = messages[message]!.content;
      const anchor = { at: at + shift, text: answer, tokens: marked.get(message)!.tokens };
      shift += answer.length - markerOf(message).length;
      const after = text.slice(anchor.at + answer.length, anchor.at + answer.length + 64);
      if (text.startsWith(answer, anchor.at) && (after === '' || model.isSpecialToken(this.tokenize(after, true, false)[0] as Token))) anchors.push(anchor);
    }
    return anchors;
  }

  private render(
    messages: readonly ChatMessage[],
    addGenerationPrompt: boolean,
    tools: readonly Record<string, unknown>[] | undefined,
    options: ChatTemplateOptions,
  ): string {
    try {
      return this.need().template.render(messages, { addGenerationPrompt, tools, ...options });
    } catch (error) {
      if (error instanceof TemplateRenderError) throw new TokenizerFailure('template_failed', `the chat template refused these messages: ${error.message}`);
      throw error;
    }
  }

  /** The text `ids` make, with their trailing special tokens (an end of generation) dropped; null when a control token is inside. */
  private sampledTextOf(ids: readonly number[]): { text: string; ids: number[] } | null {
    const { model } = this.need();
    const kept = [...ids] as Token[];
    while (kept.length > 0 && model.isSpecialToken(kept.at(-1))) kept.pop();
    // A control token inside writes itself out only with special tokens shown: two native calls, not one per id.
    const text = model.detokenize(kept, true);
    return text === model.detokenize(kept, false) ? { text, ids: kept } : null;
  }

  /**
   * The thinking tags, the answer's headers and end, the tool-call markers, and the tag-like pieces of each, that are one control token each: engines
   * write them out in their text.
   */
  private preservedTokens(thinking: ThinkingTags | null, toolMarkers: readonly string[]): string[] {
    const { model } = this.need();
    const thinkingTags = thinking ? markerPieces([thinking.start, thinking.end, ...(thinking.answer?.headers ?? []), thinking.answer?.end ?? '']) : [];
    const candidates = [...thinkingTags, ...toolMarkers];
    return [...new Set(candidates.filter((tag) => tag !== ''))].filter((tag) => {
      const ids = this.tokenize(tag, true, false);
      return ids.length === 1 && model.isSpecialToken(ids[0] as Token);
    });
  }

  /** GBNF for a JSON schema (null: any JSON object), by node-llama-cpp's JSON-schema grammar (json-schema-grammar.ts). */
  async jsonSchemaGrammar(schema: Record<string, unknown> | null): Promise<string> {
    try {
      return await jsonSchemaGrammar(this.need().llama, schema);
    } catch (error) {
      if (error instanceof TokenizerFailure) throw error;
      throw new TokenizerFailure('schema_failed', `the JSON schema cannot be made a grammar: ${(error as Error).message}`);
    }
  }

  /** The text of a completion prompt as the model expects it (BOS when the model wants one). */
  tokenizePrompt(text: string): number[] {
    return this.tokenize(text, false, this.need().model.tokens.shouldPrependBosToken);
  }

  async dispose(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    await opened?.model.dispose();
    await opened?.llama.dispose();
  }

  private need(): Opened {
    if (!this.opened) throw new TokenizerFailure('not_open', 'no model is open in this tokenizer process');
    return this.opened;
  }

  private async load(llama: Llama, options: Parameters<Llama['loadModel']>[0], code: TokenizerErrorCode, what: string): Promise<LlamaModel> {
    this.lastNativeError = undefined;
    try {
      return await llama.loadModel(options);
    } catch (error) {
      // llama.cpp's log lines reach JS through their own queue, which may come after the rejection.
      if (!this.lastNativeError) await new Promise((resolve) => setTimeout(resolve, NATIVE_LOG_GRACE_MS));
      const native = this.lastNativeError ? ` (llama.cpp: ${this.lastNativeError})` : '';
      throw new TokenizerFailure(code, `${what}: ${(error as Error).message}${native}`);
    }
  }

  private logNative(level: LlamaLogLevel, message: string): void {
    const line = message.trimEnd();
    if (level === LlamaLogLevel.error && line && !/failed to load model$/.test(line)) this.lastNativeError = line.replace(/^llama_model_load: /, '');
    this.log(`llama.cpp ${level}: ${line}`);
  }
}

/** The bounded header check (and, unless a test skips them, the hyper-parameter bounds) as typed failures. */
async function checkHeader(path: string, skipBounds: boolean): Promise<GgufHeader> {
  try {
    return await (skipBounds ? readGgufFileHeader(path) : readModelFileHeader(path));
  } catch (error) {
    if (error instanceof ModelFileError) throw new TokenizerFailure(error.code === 'not_found' ? 'model_not_found' : 'model_invalid', error.message);
    if (error instanceof GgufFormatError) throw new TokenizerFailure('model_invalid', `not a usable GGUF model: ${error.message}`);
    throw error;
  }
}

/** node-llama-cpp's binding of llama.cpp's own Jinja engine (internal to node-llama-cpp 3.21.1, pinned). */
type NativeJinja = new (source: string) => { render(context: Record<string, unknown>): string };

/** The model's chat template on llama.cpp's Jinja engine, with the model's BOS and EOS as llama-server gives them. */
function openTemplate(llama: Llama, model: LlamaModel, source: string): ChatTemplate {
  const Renderer = (llama as unknown as { _bindings?: { AddonJinjaRenderer?: NativeJinja } })._bindings?.AddonJinjaRenderer;
  if (typeof Renderer !== 'function')
    throw new TokenizerFailure('internal_error', "node-llama-cpp's native Jinja renderer is missing (is node-llama-cpp 3.21.1 installed?)");
  const compile = (text: string): CompiledTemplate => new Renderer(text);
  const { tokens } = model;
  try {
    return new ChatTemplate(source, compile, {
      bos: tokens.bosString ?? '',
      eos: tokens.eosString ?? '',
      addBos: tokens.shouldPrependBosToken,
      addEos: tokens.shouldAppendEosToken,
    });
  } catch (error) {
    throw new TokenizerFailure('template_invalid', `the chat template does not parse: ${templateErrorWords(error)}`);
  }
}

/**
 * Whether a prompt ends inside the model's thinking: its generation prompt opened the thinking tag (DeepSeek R1,
 * QwQ), or the template has only a closing tag, so an answer thinks until it closes it.
 */
export function endsInThinking(prompt: string, thinking: ThinkingTags | null): boolean {
  if (!thinking || thinking.end === '') return false;
  return thinking.start === '' || prompt.trimEnd().endsWith(thinking.start);
}
