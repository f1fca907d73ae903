/**
 * A forced tool call in every format Manifold reads, end to end: one grafted family model per format
 * (build/family-models.ts: its real vocabulary and chat template on random weights) behind `serve` on a
 * node-llama-cpp engine, through the official `openai` client. The template is read in its family's
 * format, the engine writes the call under the grammar of that format, and the answer's `tool_calls`
 * names the function with arguments that validate (an enum string, an integer). The parses themselves
 * are checked against llama.cpp's tests in the unit tests of each format's table.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { ensureFamilyModel, type FamilyName } from '../../build/family-models.js';
import type { ToolCallFormat } from '../../common/tool-calls/tool-call-format.js';
import { startServed } from '../helpers/served.js';

/** One family for each format. */
const FAMILY_OF: Record<ToolCallFormat, FamilyName> = {
  hermes: 'hermes3-tools',
  llama3: 'llama3.1',
  mistral: 'mistral-nemo',
  harmony: 'gpt-oss',
  'qwen3-xml': 'qwen3.5',
  'seed-oss': 'seed-oss',
  'minimax-m2': 'minimax-m2',
  glm: 'glm-4.7-flash',
  'dsml-v3.2': 'deepseek-v3.2',
  'dsml-v4': 'deepseek-v4',
  hy3: 'hy3',
  'minimax-m3': 'minimax-m3',
  'kimi-k3': 'kimi-k3',
  minicpm5: 'minicpm5',
  'muse-glimmer': 'muse-glimmer',
  'deepseek-r1': 'deepseek-r1',
  'deepseek-v3.1': 'deepseek-v3.1',
  'kimi-k2': 'kimi-k2-thinking',
  'solar-open': 'solar-open',
  'mistral-args': 'ministral-3-reasoning',
  'mistral-call-id': 'mistral-small-3.2',
  'functionary-v3.1': 'functionary-v3.1',
  'functionary-v3.2': 'functionary-v3.2',
  'command-r7b': 'cohere2-moe',
  'command-r-plus': 'command-r-plus-tools',
  'nemotron-v2': 'nemotron-nano-v2',
  apriel: 'apriel-1.6-thinker',
  'firefunction-v2': 'firefunction-v2',
  apertus: 'apertus',
  'minimax-m1': 'minimax-m1',
  gigachat3: 'gigachat3',
  'gigachat3.1': 'gigachat3.1',
  gemma4: 'gemma4',
  lfm2: 'lfm2.5',
};

const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Rome'] }, days: { type: 'integer' } }, required: ['city', 'days'] },
  },
};

describe('a forced call in every tool-call format', () => {
  it.each(Object.entries(FAMILY_OF))('%s (%s): the call is written in the format and read back with arguments that validate', async (format, family) => {
    const served = await startServed({
      model: await ensureFamilyModel(family),
      replicas: 1,
      engine: { kind: 'node-llama-cpp', contextSize: 2048, slots: 1, threads: 1 },
    });
    try {
      expect(served.workstation.tokenizer.toolSupport.format).toBe(format);
      const client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const forced = await client.chat.completions.create({
        model: served.workstation.modelId,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [weather],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        max_tokens: 300,
        temperature: 0,
      });
      const choice = forced.choices[0]!;
      expect(choice.finish_reason, JSON.stringify(choice.message)).toBe('tool_calls');
      const call = choice.message.tool_calls?.[0];
      expect(call?.type === 'function' ? call.function.name : null).toBe('get_weather');
      const args = call?.type === 'function' ? (JSON.parse(call.function.arguments) as { city: string; days: number }) : null;
      expect(['Paris', 'Rome']).toContain(args?.city);
      expect(Number.isInteger(args?.days)).toBe(true);
    } finally {
      await served.close();
    }
  });
});
