/**
 * The seeded script of a realistic multi-turn chat benchmark, pure logic: C conversations × R rounds,
 * each conversation opening with a system prompt shared by all (one app, one persona) followed by its
 * own long first message (a pasted document, a question with context), then shorter follow-ups; and who
 * speaks next, drawn as the run goes among the conversations not waiting for an answer, so a conversation
 * comes back after a random number of others have spoken. The answers are the server's, appended to the
 * history as text by the driver (bench/chat-workload.ts).
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
  return { conversations };
}

/**
 * Who speaks when: conversations not waiting for an answer take turns, the next speaker drawn with a weight
 * of its rounds left (a ticket drawn from those remaining), so the one that just got its answer is no
 * likelier to speak than its rounds left make it. (A fixed shuffle of the tickets, each served as soon as
 * its conversation could speak, favoured it: its tickets skipped while it waited headed the queue, and it
 * spoke next in ~43% of the turns after an answer where chance gives ~1 in 8.)
 */
export class TurnTaking {
  private readonly roundsLeft: number[];
  private readonly waiting = new Set<number>();

  constructor(
    private readonly rounds: number,
    conversations: number,
    private readonly random: () => number,
  ) {
    this.roundsLeft = Array.from({ length: conversations }, () => rounds);
  }

  /** The next turn, its conversation now waiting for an answer; null when every conversation with rounds left is waiting. */
  next(): { conversation: number; round: number } | null {
    let tickets = 0;
    for (const [conversation, rounds] of this.roundsLeft.entries()) if (!this.waiting.has(conversation)) tickets += rounds;
    if (tickets === 0) return null;
    let draw = Math.floor(this.random() * tickets);
    for (const [conversation, rounds] of this.roundsLeft.entries()) {
      if (this.waiting.has(conversation)) continue;
      if (draw < rounds) {
        const round = this.rounds - rounds;
        this.roundsLeft[conversation] = rounds - 1;
        this.waiting.add(conversation);
        return { conversation, round };
      }
      draw -= rounds;
    }
    throw new Error('unreachable: the draw is below the tickets counted');
  }

  /** The conversation's answer (and its think time) is over: it may speak again. */
  answered(conversation: number): void {
    this.waiting.delete(conversation);
  }

  /** Rounds the conversation has still to speak. */
  roundsLeftOf(conversation: number): number {
    return this.roundsLeft[conversation]!;
  }

  /** Every round spoken and answered. */
  get finished(): boolean {
    return this.waiting.size === 0 && this.roundsLeft.every((rounds) => rounds === 0);
  }
}
