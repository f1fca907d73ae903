/**
 * The realistic multi-turn chat workload: the seeded script of bench/chat-script.ts driven through
 * `/v1/chat/completions` with SSE and the official `openai` client, as a chat app would. Each
 * conversation's history is kept as text (the server's answers appended as assistant messages), so its
 * prompts grow turn by turn; at most `concurrency` requests are in flight, at most one per conversation,
 * and whenever a request or a think time ends the next speaker is drawn (seeded) among the conversations
 * whose previous answer (and optional think time) is over (TurnTaking in bench/chat-script.ts). After the
 * run, `oracleOf` tokenizes what was sent for the oracle line (bench/oracle.ts), off the clock.
 */
import OpenAI from 'openai';
import type { Tokenizer } from '../core/tokenizer.js';
import { chatScript, TurnTaking, type ChatScriptOptions } from './chat-script.js';
import { oracleShare } from './oracle.js';
import { seeded } from './stats.js';
import { streamRequest, type ClientTarget, type RequestResult } from './workload.js';

export interface ChatWorkloadOptions extends ChatScriptOptions {
  answerTokens: number;
  concurrency: number;
  /** Mean pause between an answer and the conversation's next message (exponential, seeded); 0 for none. */
  thinkMs: number;
}

export interface ChatTurnResult extends RequestResult {
  /** The order it was sent in, from 0. */
  sequence: number;
  messages: OpenAI.ChatCompletionMessageParam[];
  answer: string;
  /** The sampled ids (Manifold's `manifold.tokens`, llama-server's logprobs); empty when neither came. */
  answerTokens: number[];
}

/** Offsets from the run's seed for the think times' and the turn order's draws, so neither repeats the script's. */
const THINK_SEED_OFFSET = 7919;
const TURN_SEED_OFFSET = 104_729;

export async function realisticChat(target: ClientTarget, options: ChatWorkloadOptions): Promise<{ results: ChatTurnResult[]; wallMs: number }> {
  const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench', maxRetries: 0 });
  const script = chatScript(options);
  const thinkRandom = seeded(options.seed + THINK_SEED_OFFSET);
  const turns = new TurnTaking(options.rounds, options.conversations, seeded(options.seed + TURN_SEED_OFFSET));
  const histories: OpenAI.ChatCompletionMessageParam[][] = script.conversations.map((c) => [{ role: 'system', content: c.system }]);
  const results: ChatTurnResult[] = [];
  let inFlight = 0;
  let sequence = 0;
  const started = performance.now();

  const turn = async (conversation: number, round: number): Promise<void> => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      ...histories[conversation]!,
      { role: 'user', content: script.conversations[conversation]!.userMessages[round]! },
    ];
    const sent = sequence++;
    const result = await streamRequest(
      client,
      target.model,
      { kind: 'chat', messages },
      options.answerTokens,
      options.seed * 100_000 + conversation * 100 + round,
      { askLogprobIds: target.logprobIds ?? false },
    );
    histories[conversation] = [...messages, { role: 'assistant', content: result.text }];
    results.push({ ...result, user: conversation, turn: round, sequence: sent, messages, answer: result.text, answerTokens: result.tokens });
  };

  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      while (inFlight < options.concurrency) {
        const next = turns.next();
        if (next === null) break;
        const { conversation, round } = next;
        inFlight++;
        turn(conversation, round).then(() => {
          inFlight--;
          const free = (): void => {
            turns.answered(conversation);
            pump();
          };
          // No think time after a conversation's last answer: nobody reads it to reply.
          if (options.thinkMs <= 0 || turns.roundsLeftOf(conversation) === 0) return free();
          setTimeout(free, -Math.log(1 - thinkRandom()) * options.thinkMs);
          // While this conversation thinks, its request slot goes to another at once.
          pump();
        }, reject);
      }
      if (turns.finished) resolve();
    };
    pump();
  });
  return { results: results.sort((a, b) => a.sequence - b.sequence), wallMs: performance.now() - started };
}

/**
 * The oracle's share of prompt tokens for a run, the prompts tokenized as the model's chat template
 * renders them; answers whose ids did not come back are tokenized from their text. `mismatched` counts
 * prompts whose length differs from the server's own count (a server rendering the template otherwise);
 * `promptTokens`, the prompts' tokens as tokenized here (what the share is of, to pool runs by).
 */
export async function oracleOf(results: readonly ChatTurnResult[], tokenizer: Tokenizer): Promise<{ share: number; mismatched: number; promptTokens: number }> {
  let mismatched = 0;
  const sent = [];
  for (const r of [...results].sort((a, b) => a.sequence - b.sequence)) {
    const messages = r.messages.map((m) => ({ role: m.role as 'system' | 'user' | 'assistant', content: m.content as string }));
    const prompt = (await tokenizer.applyChatTemplate(messages)).tokens;
    if (r.error === null && prompt.length !== r.promptTokens) mismatched++;
    sent.push({ conversation: r.user!, prompt, answer: r.answerTokens.length ? r.answerTokens : await tokenizer.tokenize(r.answer) });
  }
  return { share: oracleShare(sent), mismatched, promptTokens: sent.reduce((n, r) => n + r.prompt.length, 0) };
}
