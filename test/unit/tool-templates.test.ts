/**
 * Tools through chat templates, rendered as the tokenizer child renders them (engine-bin/chat-template.ts on
 * llama.cpp's Jinja engine): a template with tools support (Qwen 2.5's structure) gets the tools in its
 * `tools` variable and the history's calls with object arguments (not JSON text encoded twice); a template
 * without (ChatML, the test model's) gets the Hermes system prompt, calls as `<tool_call>` blocks and
 * results as one user turn.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CHATML_TEMPLATE } from '../../common/chat-templates.js';
import { ChatTemplate, type TemplateCompiler } from '../../engine-bin/chat-template.js';
import { nativeJinja } from '../helpers/native-jinja.js';
import { toolSupportOf } from '../../common/tool-calls/tool-call-format.js';
import { withToolsInPlainTurns } from '../../common/tool-calls/tool-prompt.js';
import { templateMessage } from '../../core/http/tool-calls-request.js';
import { chatCompletionRequestSchema } from '../../core/http/openai-schemas.js';
import type { ChatMessage } from '../../common/tokenizer-protocol.js';

/** Qwen 2.5's tool template, its structure kept (system prompt shortened). */
const QWEN_TOOLS_TEMPLATE = `{%- if tools %}{{- '<|im_start|>system\\n' }}{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}{%- else %}{{- 'You are Qwen.' }}{%- endif %}
{{- "\\n\\n# Tools\\n\\n<tools>" }}{%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}{{- "\\n</tools><|im_end|>\\n" }}
{%- else %}{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}{%- endif %}{%- endif %}
{%- for message in messages %}
{%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
{%- elif message.role == "assistant" %}{{- '<|im_start|>' + message.role }}{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}
{%- for tool_call in message.tool_calls %}{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '\\n<tool_call>\\n{"name": "' }}{{- tool_call.name }}{{- '", "arguments": ' }}{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}
{%- elif message.role == "tool" %}{%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}{%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}{{- '<|im_end|>\\n' }}{%- endif %}
{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}`;

const tool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
} as const;

/** A round trip's history as an OpenAI client sends it, as template messages. */
const history = chatCompletionRequestSchema
  .parse({
    messages: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '21' },
      { role: 'tool', tool_call_id: 'call_2', content: '25' },
    ],
  })
  .messages.map(templateMessage);

let compile: TemplateCompiler;
beforeAll(async () => {
  compile = await nativeJinja();
});

const templateOf = (source: string): ChatTemplate => new ChatTemplate(source, compile, { bos: '', eos: '', addBos: false, addEos: false });
const render = (source: string, messages: ChatMessage[], tools?: Record<string, unknown>[]): string =>
  templateOf(source).render(messages, { addGenerationPrompt: true, tools });

describe('tools through a template that renders them', () => {
  it('puts the tools in its tools variable and the calls with object arguments', () => {
    const template = templateOf(QWEN_TOOLS_TEMPLATE);
    expect(template.caps).toMatchObject({ tools: true, toolCalls: true, objectArguments: true, systemRole: true });
    expect(toolSupportOf(QWEN_TOOLS_TEMPLATE, template.caps)).toEqual({ format: 'hermes', templateTakesTools: true, templateTakesCalls: true });
    expect(history[1]!.tool_calls![0]!.function.arguments).toBe('{"city":"Paris"}');
    const text = render(QWEN_TOOLS_TEMPLATE, history, [tool]);
    expect(text).toContain('<tools>\n{"type": "function", "function": {"name": "get_weather"');
    expect(text).toContain('<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>');
    expect(text).toContain('<|im_start|>user\n<tool_response>\n21\n</tool_response>\n<tool_response>\n25\n</tool_response><|im_end|>');
    expect(text.endsWith('<|im_start|>assistant\n')).toBe(true);
  });
});

describe('tools through a template that does not (ChatML)', () => {
  it('puts the tools in a Hermes system prompt, calls as <tool_call> blocks and results in one user turn', () => {
    expect(templateOf(CHATML_TEMPLATE).caps.tools).toBe(false);
    expect(toolSupportOf(CHATML_TEMPLATE, { tools: false, toolCalls: false })).toEqual({
      format: 'hermes',
      templateTakesTools: false,
      templateTakesCalls: false,
    });
    const turns = withToolsInPlainTurns(history, [tool.function]);
    expect(turns.map((t) => t.role)).toEqual(['system', 'user', 'assistant', 'user']);
    const text = render(CHATML_TEMPLATE, turns);
    expect(text).toMatch(/^<\|im_start\|>system\n# Tools\n[\s\S]*<tools>\n\{"type":"function","function":\{"name":"get_weather"/);
    expect(text).toContain(
      '<|im_start|>assistant\n<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>\n<tool_call>\n{"name":"get_weather","arguments":{"city":"Rome"}}\n</tool_call><|im_end|>',
    );
    expect(text).toContain('<|im_start|>user\n<tool_response>\n21\n</tool_response>\n<tool_response>\n25\n</tool_response><|im_end|>');
  });

  it('adds the tools to an existing system prompt, and renders a history with no tools offered', () => {
    const withSystem = withToolsInPlainTurns([{ role: 'system', content: 'Be brief.' }, ...history], [tool.function]);
    expect(withSystem[0]!.content).toMatch(/^Be brief\.\n\n# Tools\n/);
    const noTools = withToolsInPlainTurns(history, []);
    expect(noTools.map((t) => t.role)).toEqual(['user', 'assistant', 'user']);
    expect(noTools.every((t) => t.tool_calls === undefined)).toBe(true);
  });
});
