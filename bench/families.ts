/**
 * `npm run bench -- families`: part 1, every family of llama.cpp's template collection as Manifold reads
 * its template (the thinking tags it found, the tool-call format it reads) from the tokenizer alone;
 * part 2, how much of each turn's prompt a replica already holds, model family by model family. Each family's grafted model (build/family-models.ts:
 * its real vocabulary and chat template)
 * is served as one replica on each engine kind; a five-turn chat (a system prompt, ~30-word questions,
 * short sampled answers sent back as the client got them — `content` only, as OpenAI clients do) runs with
 * thinking on (the template's default) and off (`chat_template_kwargs: {enable_thinking: false}`), and the
 * table gives the cached share of turn 2's and turn 5's prompt (`cached_tokens / prompt_tokens`). A share
 * well under the others says the template rewrites its history: earlier reasoning dropped, a system prompt
 * moved next to the last question.
 */
import OpenAI from 'openai';
import { ensureFamilyModel, FAMILY_MODELS, type FamilyName } from '../build/family-models.js';
import type { ThinkingTags } from '../common/tokenizer-protocol.js';
import type { ToolSupport } from '../common/tool-calls/tool-call-format.js';
import { Tokenizer } from '../core/tokenizer.js';
import { withServed } from './served-replicas.js';
import { table } from './stats.js';

export interface FamiliesOptions {
  /** Part 1's families (each opened in a tokenizer child only). */
  described: readonly FamilyName[];
  /** Part 2's families (each served). */
  families: readonly FamilyName[];
  kinds: readonly ('node-llama-cpp' | 'llama-server')[];
  turns: number;
  answerTokens: number;
}

interface Row {
  family: string;
  kind: string;
  thinking: 'on' | 'off';
  /** Cached share of each turn's prompt, turn 1 first. */
  shares: number[];
}

const WORDS = 'the model answers each question about the replica the slot and the cache in a few plain words please'.split(' ');

/** A question of about 30 words, different for each turn. */
const question = (turn: number): string => Array.from({ length: 30 }, (_, i) => WORDS[(i * 7 + turn * 3) % WORDS.length]).join(' ') + `? (${turn + 1})`;

async function chatShares(client: OpenAI, model: string, turns: number, answerTokens: number, thinking: 'on' | 'off'): Promise<number[]> {
  // Each chat its own system prompt, so a chat never starts on what the one before left in the slot.
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    { role: 'system', content: `Thinking ${thinking}: you are a brief assistant for a serving workstation.` },
  ];
  const shares: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: 'user', content: question(turn) });
    const body = {
      model,
      messages,
      max_tokens: answerTokens,
      temperature: 0.7,
      seed: turn + 1,
      user: 'families',
      ...(thinking === 'off' ? { chat_template_kwargs: { enable_thinking: false } } : {}),
    };
    const answer = await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const usage = answer.usage!;
    shares.push((usage.prompt_tokens_details?.cached_tokens ?? 0) / usage.prompt_tokens);
    messages.push({ role: 'assistant', content: answer.choices[0]!.message.content ?? '' });
  }
  return shares;
}

/** The thinking tags and tool-call format of each family's template, as the tokenizer child reads them. */
async function describeFamilies(families: readonly FamilyName[]): Promise<{ family: string; template: string; tags: string; toolFormat: string }[]> {
  const described = [];
  for (const family of families) {
    const tokenizer = await Tokenizer.open(await ensureFamilyModel(family));
    try {
      described.push({ family, template: FAMILY_MODELS[family].template, tags: tagsText(tokenizer.thinking), toolFormat: formatText(tokenizer.toolSupport) });
    } finally {
      await tokenizer.dispose();
    }
  }
  return described;
}

const tagsText = (tags: ThinkingTags | null): string => (tags ? `\`${tags.start}\` … \`${tags.end}\`` : '—');
/**
 * The format, and where the offered tools go when the template does not render them: a system prompt (Hermes' with its syntax when the template
 * renders no calls either).
 */
const formatText = (support: ToolSupport): string => (support.templateTakesTools ? support.format : `${support.format} (tools in a system prompt)`);

export async function runFamilies(options: FamiliesOptions): Promise<{ described: Awaited<ReturnType<typeof describeFamilies>>; rows: Row[]; text: string }> {
  const described = await describeFamilies(options.described);
  const rows: Row[] = [];
  for (const family of options.families) {
    const model = await ensureFamilyModel(family);
    for (const kind of options.kinds) {
      await withServed({ model, replicas: 1, engine: { kind, contextSize: 4096, slots: 1, threads: 1 } }, async (target, served) => {
        const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'unused', maxRetries: 0 });
        const thinks = served.workstation.tokenizer.thinking !== null;
        for (const thinking of thinks ? (['on', 'off'] as const) : (['off'] as const)) {
          rows.push({ family, kind, thinking, shares: await chatShares(client, target.model, options.turns, options.answerTokens, thinking) });
        }
      });
    }
  }
  const percent = (share: number | undefined): string => (share === undefined ? '—' : `${(share * 100).toFixed(0)}%`);
  const text = [
    table(
      ['family', 'template', 'thinking tags', 'tool calls read as'],
      described.map((d) => [d.family, d.template, d.tags, d.toolFormat]),
    ),
    table(
      ['family', 'engine', 'thinking', 'turn 2 cached', `turn ${options.turns} cached`],
      rows.map((row) => [row.family, row.kind, row.thinking, percent(row.shares[1]), percent(row.shares[options.turns - 1])]),
    ),
  ].join('\n\n');
  return { described, rows, text };
}
