/**
 * Which tool-call format each template of llama.cpp's collection is read in (pure logic over the template
 * files of the llama.cpp source node-llama-cpp ships): the family llama.cpp's own handlers and its
 * differential autoparser find for it. `hermes` holds the templates that write Hermes' `<tool_call>` JSON,
 * those that render no calls at all, and the two llama.cpp reads in formats Manifold does not (Functionary
 * v3.2's `>>>` recipients, Muse Glimmer's recipient messages).
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureLlamaCppSource, templateNames, templatePath } from '../../build/llama-cpp-source.js';
import { toolSupportOf } from '../../common/tool-calls/tool-call-format.js';

const EXPECTED: Record<string, string[]> = {
  apertus: ['Apertus-8B-Instruct'],
  apriel: ['Apriel-1.6-15b-Thinker-fixed', 'unsloth-Apriel-1.5'],
  'command-r-plus': ['CohereForAI-c4ai-command-r-plus-tool_use'],
  'command-r7b': ['Cohere2MoE', 'CohereForAI-c4ai-command-r7b-12-2024-tool_use'],
  'deepseek-r1': ['deepseek-ai-DeepSeek-R1-Distill-Llama-8B', 'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B', 'llama-cpp-deepseek-r1'],
  'deepseek-v3.1': ['deepseek-ai-DeepSeek-V3.1'],
  'dsml-v3.2': ['deepseek-ai-DeepSeek-V3.2'],
  'dsml-v4': ['deepseek-ai-DeepSeek-V4-Flash-0731', 'deepseek-ai-DeepSeek-V4'],
  'firefunction-v2': ['fireworks-ai-llama-3-firefunction-v2'],
  'functionary-v3.1': ['meetkai-functionary-medium-v3.1'],
  'functionary-v3.2': ['meetkai-functionary-medium-v3.2'],
  gemma4: ['google-gemma-4-31B-it-interleaved', 'google-gemma-4-31B-it'],
  gigachat3: ['GigaChat3-10B-A1.8B'],
  'gigachat3.1': ['GigaChat3.1-10B-A1.8B'],
  glm: ['GLM-4.6', 'GLM-4.7-Flash', 'poolside-Laguna-S-2.1', 'poolside-Laguna-XS-2.1', 'poolside-Laguna-XS.2'],
  harmony: ['openai-gpt-oss-120b'],
  hermes: [
    'Bielik-11B-v3.0-Instruct',
    'HuggingFaceTB-SmolLM3-3B',
    'MiMo-VL',
    'NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use',
    'NousResearch-Hermes-3-Llama-3.1-8B-tool_use',
    'Qwen-QwQ-32B',
    'Qwen-Qwen2.5-7B-Instruct',
    'Qwen-Qwen3-0.6B',
    'Reka-Edge',
    'google-gemma-2-2b-it',
    'ibm-granite-granite-3.3-2B-Instruct',
    'ibm-granite-granite-4.0',
    'ibm-granite-granite-4.1',
    'llama-cpp-rwkv-world',
    'microsoft-Phi-3.5-mini-instruct',
  ],
  hy3: ['tencent-Hy3'],
  'kimi-k2': ['Kimi-K2-Instruct', 'Kimi-K2-Thinking', 'moonshotai-Kimi-K2'],
  'kimi-k3': ['Kimi-K3'],
  lfm2: ['LFM2-8B-A1B', 'LFM2.5-8B-A1B', 'LFM2.5-Instruct'],
  llama3: ['meta-llama-Llama-3.1-8B-Instruct', 'meta-llama-Llama-3.2-3B-Instruct', 'meta-llama-Llama-3.3-70B-Instruct'],
  minicpm5: ['openbmb-MiniCPM5-1B'],
  'minimax-m1': ['MiniMax-M1'],
  'minimax-m2': ['MiniMax-M2'],
  'minimax-m3': ['MiniMax-M3'],
  mistral: ['mistralai-Mistral-Nemo-Instruct-2407'],
  'mistral-args': ['mistralai-Ministral-3-14B-Reasoning-2512', 'unsloth-mistral-Devstral-Small-2507'],
  'mistral-call-id': ['Mistral-Small-3.2-24B-Instruct-2506'],
  'muse-glimmer': ['muse-glimmer'],
  'nemotron-v2': ['NVIDIA-Nemotron-Nano-v2'],
  'qwen3-xml': ['NVIDIA-Nemotron-3-Nano-30B-A3B-BF16', 'Qwen3-Coder', 'Qwen3.5-4B', 'StepFun3.5-Flash'],
  'seed-oss': ['ByteDance-Seed-OSS'],
  'solar-open': ['upstage-Solar-Open-100B'],
};

let source: string;
beforeAll(async () => {
  source = await ensureLlamaCppSource();
}, 120_000);

describe("the tool-call format of each template in llama.cpp's collection", () => {
  it("reads every template in its family's format, and every template is named here", async () => {
    const names = await templateNames(source);
    expect(names.slice().sort()).toEqual(Object.values(EXPECTED).flat().sort());
    for (const [format, templates] of Object.entries(EXPECTED)) {
      for (const name of templates)
        expect(toolSupportOf(await readFile(templatePath(source, name), 'utf8'), { tools: true, toolCalls: true }).format, name).toBe(format);
    }
  });
});
