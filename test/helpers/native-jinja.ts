/** llama.cpp's Jinja engine as the tokenizer child compiles templates with it (node-llama-cpp's native renderer), for tests of chat-template.ts. */
import { getLlama } from 'node-llama-cpp';
import type { CompiledTemplate, TemplateCompiler } from '../../engine-bin/chat-template.js';

type NativeJinja = new (source: string) => CompiledTemplate;

export async function nativeJinja(): Promise<TemplateCompiler> {
  const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false });
  const Renderer = (llama as unknown as { _bindings: { AddonJinjaRenderer: NativeJinja } })._bindings.AddonJinjaRenderer;
  return (source) => new Renderer(source);
}
