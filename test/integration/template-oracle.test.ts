/**
 * Every chat template in llama.cpp's collection (models/templates, one grafted family model each:
 * build/family-models.ts) renders through Manifold's tokenizer child exactly as llama-server built from the
 * same llama.cpp renders it (`POST /apply-template`, the oracle), on each conversation of
 * bench/template-conversations.ts; where llama-server refuses, Manifold refuses too (a 400 naming the
 * template's words, never a 5xx). Each thinking family's answer, written in the tags its tokenizer found,
 * splits into its reasoning and its content as it streams. One deliberate difference is left out: a template that does not render
 * tools gets them in a system prompt from Manifold (llama-server drops them).
 */
import { describe, expect, it } from 'vitest';
import { startLlamaServerNode } from '../../bench/llama-server-node.js';
import { TEMPLATE_CONVERSATIONS } from '../../bench/template-conversations.js';
import { ensureFamilyModel, FAMILY_MODELS, type FamilyName } from '../../build/family-models.js';
import { chatCompletionRequestSchema } from '../../core/http/openai-schemas.js';
import { chatPrompt } from '../../core/http/tool-calls-request.js';
import { Tokenizer, TokenizerError } from '../../core/tokenizer.js';
import { ReasoningSplit } from '../../common/reasoning-split.js';

/** What one side made of a conversation: the prompt, or its refusal. */
type Rendered = { prompt: string } | { refused: string };

async function oracle(url: string, body: unknown): Promise<Rendered> {
  const response = await fetch(`${url}/apply-template`, { method: 'POST', body: JSON.stringify(body) });
  const json = (await response.json()) as { prompt?: string; error?: { message?: string } };
  return response.ok && typeof json.prompt === 'string' ? { prompt: json.prompt } : { refused: json.error?.message ?? `HTTP ${response.status}` };
}

async function manifold(tokenizer: Tokenizer, body: unknown): Promise<Rendered> {
  try {
    return { prompt: (await chatPrompt(tokenizer, chatCompletionRequestSchema.parse(body))).text };
  } catch (error) {
    if (error instanceof TokenizerError) return { refused: error.message };
    throw error;
  }
}

/**
 * A thinking family's answer written in its tags as its tokenizer found them (`open`: the prompt opened the
 * thinking), split as it streams a character at a time: `reasoning|content|order of the events`; null
 * when the family does not think.
 */
function thinkingSplit(tokenizer: Tokenizer, open: boolean): string | null {
  const tags = tokenizer.thinking;
  if (!tags) return null;
  const text = `${open ? '' : tags.start}plan the steps${tags.end}${tags.answer?.headers[0] ?? ''}the answer${tags.answer?.end ?? ''}`;
  const split = new ReasoningSplit(tags, open);
  const events = [...[...text].flatMap((c) => split.push(c)), ...split.end()];
  const of = (type: string): string =>
    events
      .filter((e) => e.type === type)
      .map((e) => e.text)
      .join('');
  const order = events.map((e) => e.type).filter((type, i, all) => type !== all[i - 1]);
  return `${of('reasoning')}|${of('content')}|${order.join(',')}`;
}

describe('chat templates against llama-server', () => {
  it("renders all of llama.cpp's templates byte for byte as /apply-template does", { timeout: 30 * 60_000 }, async () => {
    const families = Object.keys(FAMILY_MODELS) as FamilyName[];
    const mismatches: string[] = [];
    let same = 0;
    let refusedBoth = 0;
    let hermesFallback = 0;
    let thinkingFamilies = 0;
    const started = performance.now();
    for (const family of families) {
      const model = await ensureFamilyModel(family);
      const [node, tokenizer] = await Promise.all([startLlamaServerNode({ model, slots: 1, contextSize: 512, threads: 1 }), Tokenizer.open(model)]);
      try {
        const split = thinkingSplit(tokenizer, (await tokenizer.applyChatTemplate([{ role: 'user', content: 'Hi' }])).thinkingOpen);
        if (split !== null) {
          thinkingFamilies++;
          if (split !== 'plan the steps|the answer|reasoning,content') mismatches.push(`${family} thinking: ${split}`);
        }
        for (const [name, body] of Object.entries(TEMPLATE_CONVERSATIONS)) {
          if ('tools' in body && !tokenizer.toolSupport.templateTakesTools) {
            hermesFallback++;
            continue;
          }
          const [expected, actual] = await Promise.all([oracle(node.url, body), manifold(tokenizer, body)]);
          if ('refused' in expected && 'refused' in actual) refusedBoth++;
          else if ('prompt' in expected && 'prompt' in actual && expected.prompt === actual.prompt) same++;
          else
            mismatches.push(
              `${family} ${name}:\n  llama-server ${JSON.stringify(expected).slice(0, 600)}\n  manifold     ${JSON.stringify(actual).slice(0, 600)}`,
            );
        }
      } finally {
        await Promise.all([node.stop(), tokenizer.dispose()]);
      }
    }
    console.log(
      `template oracle: ${families.length} families, ${same} renders identical, ${refusedBoth} refused by both, ${mismatches.length} different, ` +
        `${hermesFallback} tool conversations on templates without tools left out, ${thinkingFamilies} thinking families' answers split, ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(mismatches).toEqual([]);
    expect(same).toBeGreaterThan(families.length * 5);
  });
});
