/**
 * `npm run bench -- families`: how much of each turn's prompt a replica already holds, model family by
 * model family. Each family's grafted model (build/family-models.ts: its real vocabulary and chat template)
 * is served as one replica on each engine kind; a five-turn chat (a system prompt, ~30-word questions,
 * short sampled answers sent back as the client got them — `content` only, as OpenAI clients do) runs with
 * thinking on (the template's default) and off (`chat_template_kwargs: {enable_thinking: false}`), and the
 * table gives the cached share of turn 2's and turn 5's prompt (`cached_tokens / prompt_tokens`). A share
 * well under the others says the template rewrites its history: earlier reasoning dropped, a system prompt
 * moved next to the last question.
 */
import OpenAI from 'openai';
import { ensureFamilyModel, type FamilyName } from '../build/family-models.js';
import { withServed } from './served-replicas.js';
import { table } from './stats.js';

export interface FamiliesOptions {
  families: readonly FamilyName[];
  kinds: readonly ('node-llama-cpp' | 'llama-server')[];
  turns: number;
  answerTokens: number;
}

interface Row {
  family: string;
  kind: string;
  /** The template's thinking tags as Manifold found them (null: it does not think), and the tool-call format it reads. */
  tags: { start: string; end: string } | null;
  toolFormat: string;
  thinking: 'on' | 'off';
  /** Cached share of each turn's prompt, turn 1 first. */
  shares: number[];
}

const WORDS = 'the model answers each question about the replica the slot and the cache in a few plain words please'.split(' ');

/** A question of about 30 words, different for each turn. */
const question = (turn: number): string => Array.from({ length: 30 }, (_, i) => WORDS[(i * 7 + turn * 3) % WORDS.length]).join(' ') + `? (${turn + 1})`;

async function chatShares(client: OpenAI, model: string, turns: number, answerTokens: number, thinking: 'on' | 'off'): Promise<number[]> {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a brief assistant for a serving workstation.' }];
  const shares: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: 'user', content: question(turn) });
    const body = { model, messages, max_tokens: answerTokens, temperature: 0.7, seed: turn + 1, user: 'families', ...(thinking === 'off' ? { chat_template_kwargs: { enable_thinking: false } } : {}) };
    const answer = await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const usage = answer.usage!;
    shares.push((usage.prompt_tokens_details?.cached_tokens ?? 0) / usage.prompt_tokens);
    messages.push({ role: 'assistant', content: answer.choices[0]!.message.content ?? '' });
  }
  return shares;
}

export async function runFamilies(options: FamiliesOptions): Promise<{ rows: Row[]; text: string }> {
  const rows: Row[] = [];
  for (const family of options.families) {
    const model = await ensureFamilyModel(family);
    for (const kind of options.kinds) {
      await withServed({ model, replicas: 1, engine: { kind, contextSize: 4096, slots: 1, threads: 1 } }, async (target, served) => {
        const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'unused', maxRetries: 0 });
        const { thinking: tags, toolSupport } = served.workstation.tokenizer;
        const toolFormat = toolSupport.templateTakesTools ? toolSupport.format : `${toolSupport.format} (in a system prompt)`;
        for (const thinking of tags ? (['on', 'off'] as const) : (['off'] as const)) {
          rows.push({ family, kind, tags, toolFormat, thinking, shares: await chatShares(client, target.model, options.turns, options.answerTokens, thinking) });
        }
      });
    }
  }
  const percent = (share: number | undefined): string => (share === undefined ? '—' : `${(share * 100).toFixed(0)}%`);
  const text = table(
    ['family', 'engine', 'thinking tags', 'tool calls read as', 'thinking', 'turn 2 cached', `turn ${options.turns} cached`],
    rows.map((row) => [row.family, row.kind, row.tags ? `\`${row.tags.start}\` … \`${row.tags.end}\`` : '—', row.toolFormat, row.thinking, percent(row.shares[1]), percent(row.shares[options.turns - 1])]),
  );
  return { rows, text };
}
