/**
 * The tool-call formats Manifold reads and writes, and which one a model's chat template speaks, told from
 * the template's own text (the markers llama.cpp's chat parsers key on). Each format is one line in the
 * table of its shape:
 * - `hermes`: Hermes / Qwen, `<tool_call>{"name": …, "arguments": …}</tool_call>` (also the fallback, and
 *   what the generated ChatML test model is given); `llama3`: a bare `{"name": …, "parameters": …}`,
 *   optionally after `<|python_tag|>`; `mistral`: `[TOOL_CALLS][{"name": …, "arguments": …}, …]`
 *   (tool-call-parsing.ts);
 * - a function's name and its parameters as XML-like keys and values (xml-tool-calls.ts);
 * - each call between its own markers, the name then the arguments' JSON (sectioned-calls.ts);
 * - JSON calls after a marker, in the family's keys (marked-json-calls.ts);
 * - calls written as expressions, Gemma 4's and LFM2's (expression-calls.ts);
 * - `harmony`: gpt-oss, a commentary message to `functions.NAME` with the arguments' JSON (harmony-calls.ts).
 */
import { z } from 'zod';

export const toolCallFormatSchema = z.enum([
  'hermes',
  'llama3',
  'mistral',
  'harmony',
  // xml-tool-calls.ts
  'qwen3-xml',
  'seed-oss',
  'minimax-m2',
  'glm',
  'dsml-v3.2',
  'dsml-v4',
  'hy3',
  'minimax-m3',
  'kimi-k3',
  'minicpm5',
  'muse-glimmer',
  // sectioned-calls.ts
  'deepseek-r1',
  'deepseek-v3.1',
  'kimi-k2',
  'solar-open',
  'mistral-args',
  'mistral-call-id',
  'functionary-v3.1',
  'functionary-v3.2',
  // marked-json-calls.ts
  'command-r7b',
  'command-r-plus',
  'nemotron-v2',
  'apriel',
  'firefunction-v2',
  'apertus',
  'minimax-m1',
  'gigachat3',
  'gigachat3.1',
  // expression-calls.ts
  'gemma4',
  'lfm2',
]);
export type ToolCallFormat = z.infer<typeof toolCallFormatSchema>;

/**
 * The format of a chat template (its source text; null when the model has none and gets ChatML), told by
 * the markers llama.cpp keys on: its specialized handlers first, in its order, then the families its
 * differential autoparser finds.
 */
function toolCallFormatOf(templateSource: string | null): ToolCallFormat {
  if (templateSource === null) return 'hermes';
  const has = (...markers: string[]): boolean => markers.every((marker) => templateSource.includes(marker));
  if (has('[TOOL_CALLS]', '[ARGS]')) return has('[CALL_ID]') ? 'mistral-call-id' : 'mistral-args';
  if (has('[TOOL_CALLS]')) return 'mistral';
  if (has('<|channel|>')) return 'harmony';
  if (has('<atem:function_calls>', '<|eom|>')) return 'muse-glimmer';
  if (has('>>>all', '>>>${recipient}')) return 'functionary-v3.2';
  if (has('<|tool_calls_section_begin|>')) return 'kimi-k2';
  if (has('<|open|>', '<|close|>', '<|end_of_msg|>')) return 'kimi-k3';
  if (has('<|START_ACTION|>')) return 'command-r7b';
  if (has('<|tool_list_start|>') || (has('List of tools: [') && !has('<|tool_list_start|>'))) return 'lfm2';
  if (has('<|role_sep|>', '<|message_sep|>')) return has('<|function_call|>') ? 'gigachat3.1' : 'gigachat3';
  if (has(']<]minimax[>[', '<invoke name=')) return 'minimax-m3';
  if (has('dsml_token', 'DSML')) return has('function_calls') ? 'dsml-v3.2' : 'dsml-v4';
  if (has('<|tool_call>call:')) return 'gemma4';
  if (has('<function name="', '<param name="')) return 'minicpm5';
  if (has('<tool_call>', '<function=', '<parameter=') && !has('<seed:tool_call>')) return 'qwen3-xml';
  if (has('<TOOLCALL>')) return 'nemotron-v2';
  // R1 puts each call's arguments in a ```json fence; V3.1 writes them bare.
  if (has('<｜tool▁calls▁begin｜>')) return has('```json') ? 'deepseek-r1' : 'deepseek-v3.1';
  if (has('<seed:tool_call>')) return 'seed-oss';
  if (has('<minimax:tool_call>')) return 'minimax-m2';
  if (has('<arg_key{}>', ':opensource')) return 'hy3';
  if (has('<arg_key>')) return 'glm';
  if (has('<|tool_call:begin|>')) return 'solar-open';
  if (has('<|tools_prefix|>')) return 'apertus';
  if (has('<tool_calls>')) return has('<tool_calls>[') ? 'apriel' : 'minimax-m1';
  if (has('Action:', '```json')) return 'command-r-plus';
  if (has('functools')) return 'firefunction-v2';
  if (has('<function=')) return 'functionary-v3.1';
  if (has('<tool_call>')) return 'hermes';
  if (has('<|python_tag|>') || (has('ipython') && has('"parameters"'))) return 'llama3';
  return 'hermes';
}

/**
 * What the tokenizer child tells core about a model's template: the call format, whether the template
 * renders `tools` itself, and whether it renders an assistant's `tool_calls` and the tool results.
 */
export const toolSupportSchema = z.object({ format: toolCallFormatSchema, templateTakesTools: z.boolean(), templateTakesCalls: z.boolean() });
export type ToolSupport = z.infer<typeof toolSupportSchema>;

/**
 * A template's tool support from its probed capabilities (the tokenizer child's probe, as llama.cpp's):
 * one that renders calls is read in its family's format (DeepSeek V3.1 and FireFunction v2 render calls
 * but not the tools, which then go in a system prompt); one that renders neither gets the tools, calls and
 * results as Hermes text in plain turns, so its calls are read as Hermes calls.
 */
export function toolSupportOf(templateSource: string | null, caps: { tools: boolean; toolCalls: boolean }): ToolSupport {
  const native = caps.tools || caps.toolCalls;
  return { format: native ? toolCallFormatOf(templateSource) : 'hermes', templateTakesTools: caps.tools, templateTakesCalls: native };
}

/** The key a format writes a call's arguments under. */
export const argumentsKey = (format: ToolCallFormat): 'arguments' | 'parameters' => (format === 'llama3' ? 'parameters' : 'arguments');
