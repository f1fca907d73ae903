/**
 * The request streams the simulation replays (bench/simulate.ts), each request as block ids of Manifold's
 * 64-token blocks (core/router/block-hash.ts), so the router's own index and costs read them:
 * - `mooncake`: Mooncake's conversation trace (bench/traces/, Apache-2.0), whose ids name 512-token blocks:
 *   each id becomes 8 ids of 64 tokens (equal ids still mean equal prefixes). The trace has no conversation
 *   id; a request's session is its first block after the shared system prompt (turns of one conversation
 *   share it). For clusters past 8 replicas the trace is laid `copies` times side by side with disjoint ids
 *   (each copy its own tenants), so every 8 replicas see the trace's own reuse.
 * - `tenants`: llm-d's shared-prefix shape: 150 tenants, each a 6,000-token prefix, each request its tenant's
 *   prefix and a 1,000-token question of its own, answered in 200 tokens.
 * - `chat`: multi-turn chat in the manner of bench/chat-workload.ts: conversations of 5 rounds, each round its
 *   history plus a 400-token message, 150-token answers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BLOCK_TOKENS } from '../../core/router/block-hash.js';
import { seeded } from '../stats.js';

export interface SimRequest {
  readonly id: number;
  /** When it arrives, ms from the start (before the load level scales time). */
  readonly arrivalMs: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** The prompt's whole 64-token blocks, as chained ids (equal ids: equal prefixes). */
  readonly blocks: readonly number[];
  /** What a balancer hashes for conversation affinity (`user` / `prompt_cache_key`). */
  readonly session: string;
}

const SUB_BLOCKS = 512 / BLOCK_TOKENS;

interface MooncakeLine {
  timestamp: number;
  input_length: number;
  output_length: number;
  hash_ids: number[];
}

const TRACE = join(import.meta.dirname, '..', 'traces', 'mooncake-conversation.jsonl');

let mooncakeLines: MooncakeLine[] | undefined;

/** The Mooncake trace's first `requests` requests (all when absent), `copies` times over with disjoint ids. */
export function mooncake(copies = 1, requests?: number): SimRequest[] {
  mooncakeLines ??= readFileSync(TRACE, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as MooncakeLine);
  const lines = requests === undefined ? mooncakeLines : mooncakeLines.slice(0, requests);
  const maxId = lines.reduce((max, l) => l.hash_ids.reduce((m, id) => Math.max(m, id), max), 0) + 1;
  const out: SimRequest[] = [];
  for (const line of lines) {
    for (let copy = 0; copy < copies; copy++) {
      const offset = copy * maxId;
      const whole = Math.floor(line.input_length / BLOCK_TOKENS);
      const blocks = Array.from({ length: whole }, (_, i) => (line.hash_ids[Math.floor(i / SUB_BLOCKS)]! + offset) * SUB_BLOCKS + (i % SUB_BLOCKS));
      out.push({
        id: out.length,
        arrivalMs: line.timestamp,
        promptTokens: line.input_length,
        outputTokens: Math.max(1, line.output_length),
        blocks,
        session: `${copy}:${line.hash_ids[1] ?? line.hash_ids[0]}`,
      });
    }
  }
  return out;
}

/** llm-d's shared-prefix tenants: `requests` requests over `durationMs`, each of a random tenant. */
export function tenants(requests: number, durationMs: number, seed = 5): SimRequest[] {
  const random = seeded(seed);
  const TENANTS = 150;
  const PREFIX_BLOCKS = Math.floor(6000 / BLOCK_TOKENS);
  const QUESTION_TOKENS = 1000;
  let fresh = TENANTS * PREFIX_BLOCKS;
  return Array.from({ length: requests }, (_, id) => {
    const tenant = Math.floor(random() * TENANTS);
    const prefix = Array.from({ length: PREFIX_BLOCKS }, (_, i) => tenant * PREFIX_BLOCKS + i);
    const question = Array.from({ length: Math.floor(QUESTION_TOKENS / BLOCK_TOKENS) }, () => fresh++);
    return {
      id,
      arrivalMs: (id / requests) * durationMs,
      promptTokens: 6000 + QUESTION_TOKENS,
      outputTokens: 200,
      blocks: [...prefix, ...question],
      session: `t${tenant}`,
    };
  });
}

/** Multi-turn chat: `conversations` conversations of 5 rounds, started over `durationMs`, a round every ~20 s. */
export function chat(conversations: number, durationMs: number, seed = 3): SimRequest[] {
  const random = seeded(seed);
  const MESSAGE_BLOCKS = Math.round(400 / BLOCK_TOKENS);
  const ANSWER_BLOCKS = Math.round(150 / BLOCK_TOKENS);
  let fresh = 0;
  const requests: Omit<SimRequest, 'id'>[] = [];
  for (let c = 0; c < conversations; c++) {
    let history: number[] = [];
    let at = random() * durationMs;
    for (let round = 0; round < 5; round++) {
      history = [...history, ...Array.from({ length: MESSAGE_BLOCKS }, () => fresh++)];
      requests.push({ arrivalMs: at, promptTokens: history.length * BLOCK_TOKENS, outputTokens: 150, blocks: history, session: `c${c}` });
      history = [...history, ...Array.from({ length: ANSWER_BLOCKS }, () => fresh++)];
      at += 10_000 + random() * 20_000;
    }
  }
  return requests.sort((a, b) => a.arrivalMs - b.arrivalMs).map((r, id) => ({ ...r, id }));
}

/** The share of prompt blocks any earlier request already computed: the hit no cache, however large, exceeds. */
/** Leading blocks of `blocks` already in `seen`: what one infinite cache holding every earlier prompt would reuse. */
export function seenStart(seen: ReadonlySet<number>, blocks: readonly number[]): number {
  let i = 0;
  while (i < blocks.length && seen.has(blocks[i]!)) i++;
  return i;
}

export function ceiling(requests: readonly SimRequest[]): number {
  const seen = new Set<number>();
  let reused = 0;
  let total = 0;
  for (const r of [...requests].sort((a, b) => a.arrivalMs - b.arrivalMs)) {
    reused += seenStart(seen, r.blocks);
    total += r.blocks.length;
    for (const b of r.blocks) seen.add(b);
  }
  return total ? reused / total : 0;
}
