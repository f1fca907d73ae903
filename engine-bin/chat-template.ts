/**
 * A model's chat template rendered as llama-server renders it (`common_chat_templates_apply_jinja` in
 * llama.cpp's common/chat.cpp, the version node-llama-cpp ships): llama.cpp's own Jinja engine (node-llama-cpp's
 * native `AddonJinjaRenderer`, the same code llama-server runs), the same source patches, the same
 * capability probes (system role, typed content, tool calls, object arguments), the same message
 * workarounds and the same context variables (`enable_thinking`, `date_string`, `preserve_reasoning`,
 * the request's `chat_template_kwargs`, `reasoning_effort`). Written by hand because llama.cpp keeps this
 * step in C++ that no package exposes; the oracle test (test/integration/template-oracle.test.ts) holds
 * it byte-identical to llama-server's `POST /apply-template` over llama.cpp's whole template collection.
 */

import type { ChatMessage } from '../common/tokenizer-protocol.js';
import { familyOf, type TemplateFamily } from './template-families.js';
import { analyzeThinking, type ThinkingTags } from './template-reasoning.js';

/** A compiled template: renders a context or throws with the template's own words. */
export type CompiledTemplate = { render(context: Record<string, unknown>): string };
export type TemplateCompiler = (source: string) => CompiledTemplate;

export interface RenderOptions {
  addGenerationPrompt: boolean;
  /** OpenAI tool objects (`{type: 'function', function: {name, description, parameters}}`). */
  tools?: readonly Record<string, unknown>[] | undefined;
  /** Thinking on or off; unset: on where the template thinks (llama-server's default). */
  enableThinking?: boolean | undefined;
  /** The request's `chat_template_kwargs`, each a template variable. */
  kwargs?: Readonly<Record<string, unknown>> | undefined;
  /** OpenAI's `reasoning_effort` ("none" turns thinking off). */
  reasoningEffort?: string | undefined;
  /** The time the date variables say (now unless a test pins it). */
  now?: Date | undefined;
}

/** What llama.cpp's capability probes find (jinja/caps.cpp), read here from what the probes render. */
export interface TemplateCaps {
  systemRole: boolean;
  /** Renders the `tools` it is given. */
  tools: boolean;
  /** Renders content only as typed parts (`[{type: 'text', text}]`), not as a string. */
  onlyTypedContent: boolean;
  toolCalls: boolean;
  objectArguments: boolean;
}

/** A template failed on these messages (raise_exception or a render error): the caller's input, a 400. */
export class TemplateRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateRenderError';
  }
}

/** The words a failed render ends with (`Jinja Exception: …` for raise_exception), without the source excerpt. */
export function templateErrorWords(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const raised = /Jinja Exception: ([\s\S]*)$/.exec(text);
  if (raised) return raised[1]!.trim();
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return (lines.at(-1) ?? text).replace(/^Error: /, '');
}

/** llama.cpp's temporary patches of two template families' own guards (common_chat_templates_init). */
function patchSource(source: string): string {
  let patched = source;
  if (patched.includes('<|channel|>') && patched.includes('in message.content or')) {
    patched = patched.replaceAll(
      '{%- if "<|channel|>analysis<|message|>" in message.content or "<|channel|>final<|message|>" in message.content %}',
      '{%- if false %}',
    );
  }
  if (patched.includes('[TOOL_CALLS]') && patched.includes("if (message['content'] is none or")) {
    patched = patched.replaceAll(
      "{%- if (message['content'] is none or message['content'] == '' or message['content']|length == 0) and (message['tool_calls'] is not defined or message['tool_calls'] is none or message['tool_calls']|length == 0) %}",
      '{%- if false %}',
    );
  }
  return patched;
}

/** ASCII, so a template's `tojson(ensure_ascii=True)` leaves it as it is. */
const MARK = 'MANIFOLD_PROBE_';
const PROBE_TOOL = {
  type: 'function',
  function: {
    name: 'tool1',
    description: 'Tool description',
    parameters: { type: 'object', properties: { arg: { type: 'string', description: 'Arg description' } }, required: ['arg'] },
  },
};

/** The message list of llama.cpp's tool probes, with the call's arguments given. */
function toolProbe(args: unknown, call = true): Record<string, unknown>[] {
  return [
    { role: 'user', content: 'User message' },
    {
      role: 'assistant',
      content: '',
      ...(call ? { tool_calls: [{ id: 'call00001', type: 'function', function: { name: `${MARK}call`, arguments: args } }] } : {}),
    },
    { role: 'tool', content: 'Tool response', tool_call_id: 'call00001' },
    { role: 'assistant', content: "The tool response was 'tool response'" },
    { role: 'user', content: 'User message' },
  ];
}

export class ChatTemplate {
  readonly caps: TemplateCaps;
  /** The tags around its thinking; null when the template does not think (thinking is then off by default). */
  readonly thinking: ThinkingTags | null;
  /** The family llama.cpp handles this template as by name, if any. */
  readonly family: TemplateFamily | undefined;
  private readonly compiled: CompiledTemplate;

  constructor(
    readonly source: string,
    compile: TemplateCompiler,
    private readonly tokens: { bos: string; eos: string; addBos: boolean; addEos: boolean },
  ) {
    this.compiled = compile(patchSource(source));
    this.caps = this.probeCaps();
    this.family = familyOf(source);
    const tags = this.family?.thinking;
    this.thinking =
      tags === undefined
        ? analyzeThinking(
            (messages, o) => this.tryDirect(messages, { enable_thinking: o.enableThinking, ...(o.tools ? { tools: o.tools } : {}) }, o.addGenerationPrompt),
            source,
            this.caps.toolCalls,
          )
        : typeof tags === 'function'
          ? tags(source)
          : tags;
  }

  /** The prompt text llama-server's `/apply-template` gives for these messages. */
  render(messages: readonly ChatMessage[], options: RenderOptions): string {
    const kwargs: Record<string, unknown> = { preserve_reasoning: true, ...options.kwargs };
    let enableThinking = options.enableThinking ?? (typeof kwargs.enable_thinking === 'boolean' ? kwargs.enable_thinking : this.thinking !== null);
    if (options.reasoningEffort === 'none') {
      enableThinking = false;
      delete kwargs.reasoning_effort;
    } else if (options.reasoningEffort) kwargs.reasoning_effort = options.reasoningEffort;
    const context: Record<string, unknown> = {
      enable_thinking: enableThinking,
      ...(options.tools && options.tools.length > 0 ? { tools: options.tools.map(templateTool) } : {}),
      ...dateVariables(options.now ?? new Date()),
      ...kwargs,
    };
    if (typeof context.preserve_reasoning === 'boolean') {
      const keep = context.preserve_reasoning;
      Object.assign(context, { preserve_thinking: keep, clear_thinking: !keep, truncate_history_thinking: !keep, drop_thinking: !keep });
    }
    if (typeof context.reasoning_effort === 'string' && context.reasoning_effort !== '') context.reasoning_strength = context.reasoning_effort;
    let turns = this.templateMessages(messages);
    if (this.family?.adjust) turns = this.family.adjust(turns, this.source);
    let text: string;
    try {
      text = this.direct(turns, context, options.addGenerationPrompt);
    } catch (error) {
      throw new TemplateRenderError(templateErrorWords(error));
    }
    return this.family?.finish ? this.family.finish(text, options.addGenerationPrompt) : text;
  }

  /** llama.cpp's `common_chat_template_direct_apply`: the template on these messages and variables, BOS and EOS as the vocabulary adds them taken off. */
  private direct(messages: Record<string, unknown>[], variables: Record<string, unknown>, addGenerationPrompt: boolean): string {
    let text = this.compiled.render({
      messages,
      bos_token: this.tokens.bos,
      eos_token: this.tokens.eos,
      ...variables,
      ...(addGenerationPrompt ? { add_generation_prompt: true } : {}),
    });
    if (this.tokens.addBos && this.tokens.bos && text.startsWith(this.tokens.bos)) text = text.slice(this.tokens.bos.length);
    if (this.tokens.addEos && this.tokens.eos && text.endsWith(this.tokens.eos)) text = text.slice(0, -this.tokens.eos.length);
    return text;
  }

  /** `direct` on probe messages (content only as typed parts where the template takes no string); null when it throws. */
  private tryDirect(messages: Record<string, unknown>[], variables: Record<string, unknown>, addGenerationPrompt: boolean): string | null {
    try {
      const turns = this.caps.onlyTypedContent
        ? messages.map((m) => (typeof m.content === 'string' ? { ...m, content: [{ type: 'text', text: m.content }] } : m))
        : messages;
      return this.direct(turns, variables, addGenerationPrompt);
    } catch {
      return null;
    }
  }

  /** The messages in llama.cpp's shape, with its workarounds for what this template cannot take. */
  private templateMessages(messages: readonly ChatMessage[]): Record<string, unknown>[] {
    const out = messages.map((message) => this.templateMessage(message));
    if (!this.source.includes('<|channel|>')) for (const message of out) if (message.role === 'developer') message.role = 'system';
    if (!this.caps.systemRole && out[0]?.role === 'system') {
      const [system, next] = out;
      out.shift();
      if (next) next.content = `${String(system!.content)}\n${String(next.content)}`;
    }
    if (this.caps.onlyTypedContent) for (const message of out) message.content = [{ type: 'text', text: message.content }];
    return out;
  }

  private templateMessage(message: ChatMessage): Record<string, unknown> {
    const out: Record<string, unknown> = { role: message.role, content: message.content };
    if (message.reasoning_content) out.reasoning_content = message.reasoning_content;
    if (message.name) out.name = message.name;
    if (message.tool_call_id) out.tool_call_id = message.tool_call_id;
    if (message.tool_calls?.length) {
      out.tool_calls = message.tool_calls.map(({ id, function: { name, arguments: args } }) => ({
        type: 'function',
        function: { name, arguments: this.caps.objectArguments ? parseArguments(args) : args },
        ...(id ? { id } : {}),
      }));
    }
    return out;
  }

  /** Renders a probe; null when the template throws on it (a probe failure says only that it did not render). */
  private probe(messages: Record<string, unknown>[], extra: Record<string, unknown> = {}): string | null {
    try {
      return this.compiled.render({ messages, bos_token: '', eos_token: '', add_generation_prompt: true, ...extra });
    } catch {
      return null;
    }
  }

  private probeCaps(): TemplateCaps {
    const tools = { tools: [PROBE_TOOL] };
    const asString = this.probe([{ role: 'user', content: `${MARK}content` }]);
    const typed = this.probe([{ role: 'user', content: [{ type: 'text', text: `${MARK}content` }] }]);
    const system = this.probe([
      { role: 'system', content: `${MARK}system` },
      { role: 'user', content: 'User message' },
    ]);
    const toolsOnly = this.probe([{ role: 'user', content: 'User message' }], {
      tools: [{ ...PROBE_TOOL, function: { ...PROBE_TOOL.function, name: `${MARK}tool` } }],
    });
    const withObject = this.probe(toolProbe({ arg: `${MARK}value` }), tools);
    const withString = this.probe(toolProbe(JSON.stringify({ arg: 'value' })), tools);
    const withoutCall = this.probe(toolProbe(null, false), tools);
    const calls = (rendered: string | null): boolean => rendered !== null && rendered !== withoutCall;
    return {
      systemRole: system?.includes(`${MARK}system`) ?? false,
      onlyTypedContent: !asString?.includes(`${MARK}content`) && (typed?.includes(`${MARK}content`) ?? false),
      tools: toolsOnly?.includes(`${MARK}tool`) ?? false,
      toolCalls: calls(withObject) || calls(withString),
      // Read as an object: the value itself, or as JSON; a repr of the whole object (`{'arg': '…'}`) reads none of it.
      objectArguments: (withObject?.includes(`${MARK}value`) ?? false) && !withObject!.includes(`{'arg': '${MARK}value'}`),
    };
  }
}

/** A tool as llama-server re-serialises it (`common_chat_tools_to_json_oaicompat`): description and parameters always present. */
function templateTool(tool: Record<string, unknown>): Record<string, unknown> {
  const { name, description, parameters } = (tool.function ?? {}) as Record<string, unknown>;
  return { type: 'function', function: { name, description: description ?? '', parameters: parameters ?? {} } };
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new TemplateRenderError(`Failed to parse tool call arguments as JSON: ${(error as Error).message}`);
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `datetime` ("%b %d %Y") and `date_string` ("%d %b %Y") in local time, as llama.cpp sets them. */
function dateVariables(now: Date): { datetime: string; date_string: string } {
  const day = String(now.getDate()).padStart(2, '0');
  const month = MONTHS[now.getMonth()]!;
  return { datetime: `${month} ${day} ${now.getFullYear()}`, date_string: `${day} ${month} ${now.getFullYear()}` };
}
