/** The shapes of tools and tool calls shared by the front, the tokenizer child and the parsers (OpenAI's, minus the wire details). */

/** A function the model may call: its name, what it does and the JSON schema of its arguments. */
export interface ToolFunction {
  name: string;
  description?: string | undefined;
  parameters?: Record<string, unknown> | undefined;
}

/** A call parsed from the model's output: the function's name and its arguments as JSON text. */
export interface ParsedToolCall {
  name: string;
  arguments: string;
}
