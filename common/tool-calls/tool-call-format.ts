/**
 * The tool-call formats Manifold reads and writes, and which one a model's chat template speaks, told from
 * the template's own text (the markers node-llama-cpp's chat wrappers and llama.cpp's chat parsers key on):
 * - `hermes`: Hermes / Qwen, `<tool_call>{"name": …, "arguments": …}</tool_call>` (also the fallback, and
 *   what the generated ChatML test model is given);
 * - `llama3`: Llama 3.1+, a bare `{"name": …, "parameters": …}` object, optionally after `<|python_tag|>`;
 * - `mistral`: `[TOOL_CALLS][{"name": …, "arguments": …}, …]`;
 * - `qwen3-xml`, `seed-oss`, `minimax-m2`, `glm`: a function's name and its parameters as XML-like key
 *   and value (xml-tool-calls.ts);
 * - `harmony`: gpt-oss, a commentary message to `functions.NAME` with the arguments' JSON (harmony-calls.ts);
 * - `deepseek-r1`, `kimi-k2`: calls in a section, each between its own markers (sectioned-calls.ts);
 * - `command-r7b`, `nemotron-v2`: a JSON array of calls between the family's markers
 *   (marked-json-calls.ts).
 */
import { z } from 'zod';

export const toolCallFormatSchema = z.enum(['hermes', 'llama3', 'mistral', 'qwen3-xml', 'seed-oss', 'minimax-m2', 'glm', 'harmony', 'deepseek-r1', 'kimi-k2', 'command-r7b', 'nemotron-v2']);
export type ToolCallFormat = z.infer<typeof toolCallFormatSchema>;

/** The format of a chat template (its source text; null when the model has none and gets ChatML). */
function toolCallFormatOf(templateSource: string | null): ToolCallFormat {
  if (templateSource === null) return 'hermes';
  if (templateSource.includes('<|channel|>')) return 'harmony';
  if (templateSource.includes('[TOOL_CALLS]')) return 'mistral';
  if (templateSource.includes('<|START_ACTION|>') && templateSource.includes('tool_name') && !templateSource.includes('<|START_TEXT|>')) return 'command-r7b';
  if (templateSource.includes('<TOOLCALL>')) return 'nemotron-v2';
  if (templateSource.includes('<｜tool▁calls▁begin｜>') && templateSource.includes('function<｜tool▁sep｜>')) return 'deepseek-r1';
  if (templateSource.includes('<|tool_calls_section_begin|>')) return 'kimi-k2';
  if (templateSource.includes('<seed:tool_call>')) return 'seed-oss';
  if (templateSource.includes('<minimax:tool_call>')) return 'minimax-m2';
  if (templateSource.includes('<arg_key>')) return 'glm';
  if (templateSource.includes('<tool_call>') && templateSource.includes('<function=') && templateSource.includes('<parameter=')) return 'qwen3-xml';
  if (templateSource.includes('<tool_call>')) return 'hermes';
  if (templateSource.includes('<|python_tag|>') || (templateSource.includes('ipython') && templateSource.includes('"parameters"'))) return 'llama3';
  return 'hermes';
}


/** What the tokenizer child tells core about a model's template: the call format, and whether the template renders `tools` itself. */
export const toolSupportSchema = z.object({ format: toolCallFormatSchema, templateTakesTools: z.boolean() });
export type ToolSupport = z.infer<typeof toolSupportSchema>;

/**
 * A template that does not render tools (`takesTools`: the tokenizer child's probe, as llama.cpp's) gets
 * them in a Hermes system prompt, so its calls are read as Hermes calls.
 */
export function toolSupportOf(templateSource: string | null, takes: boolean): ToolSupport {
  return { format: takes ? toolCallFormatOf(templateSource) : 'hermes', templateTakesTools: takes };
}

/** The key a format writes a call's arguments under. */
export const argumentsKey = (format: ToolCallFormat): 'arguments' | 'parameters' => (format === 'llama3' ? 'parameters' : 'arguments');
