/**
 * The seeded script of a realistic multi-turn chat benchmark, pure logic: C conversations × R rounds,
 * each conversation opening with a system prompt shared by all (one app, one persona) followed by its
 * own long first message (a pasted document, a question with context), then shorter follow-ups; and the
 * order in which conversations take their turns, a seeded shuffle of R tickets per conversation, so a
 * conversation comes back after a random number of others have spoken. The answers are the server's,
 * appended to the history as text by the driver (bench/chat-workload.ts).
 */
import { seeded } from './stats.js';
import { sentence } from './workload.js';

export interface ChatScriptOptions {
  conversations: number;
  rounds: number;
  /** Words of the system prompt every conversation shares. */
  systemWords: number;
  /** Words of each conversation's first user message. */
  openingWords: number;
  /** Words of each later user message. */
  followUpWords: number;
  seed: number;
}

export interface ScriptedConversation {
  system: string;
  /** One user message per round, in order. */
  userMessages: string[];
}

export interface ChatScript {
  conversations: ScriptedConversation[];
  /** Conversation indices, each appearing `rounds` times: who speaks next, in this order, as soon as it can. */
  order: number[];
}

export function chatScript(options: ChatScriptOptions): ChatScript {
  for (const field of ['conversations', 'rounds'] as const) {
    if (!Number.isInteger(options[field]) || options[field] < 1) throw new Error(`chat script: ${field} must be a whole number ≥ 1 (got ${options[field]})`);
  }
  const random = seeded(options.seed);
  const system = sentence(random, options.systemWords);
  const conversations = Array.from({ length: options.conversations }, () => ({
    system,
    userMessages: Array.from({ length: options.rounds }, (_, round) => sentence(random, round === 0 ? options.openingWords : options.followUpWords)),
  }));
  const order = Array.from({ length: options.conversations * options.rounds }, (_, i) => i % options.conversations);
  // Fisher–Yates: every interleaving of the tickets equally likely; a conversation's own rounds stay in
  // order because its tickets are interchangeable.
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return { conversations, order };
}

/**
 * The next ticket to serve: the first one in `order` (from the remaining tickets) whose conversation is
 * not waiting for an answer; -1 when every remaining ticket's conversation is busy.
 */
export function nextTicket(remaining: readonly number[], busy: ReadonlySet<number>): number {
  return remaining.findIndex((conversation) => !busy.has(conversation));
}
