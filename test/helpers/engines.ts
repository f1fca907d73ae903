/** Test helpers: start real engine children on the generated model and stop them after each test file. */
import { afterAll } from 'vitest';
import { EngineClient } from '../../core/engine/engine-client.js';
import { forkEngine } from '../../core/engine/engine-process.js';
import type { LoadOptionsInput } from '../../common/engine-protocol.js';
import { findLlamaServer } from '../../common/node/llama-server-binary.js';

export function testModelPath(): string {
  const path = process.env.MANIFOLD_TEST_MODEL;
  if (!path) throw new Error('MANIFOLD_TEST_MODEL is not set: vitest runs test/global-setup.ts first');
  return path;
}

const started: EngineClient[] = [];
afterAll(async () => {
  await Promise.all(started.map((client) => (client.alive ? client.shutdown() : client.exited)));
});

/** A spawned engine child that has not loaded a model, with its log lines collected. */
export function spawnEngine(): { client: EngineClient; logs: string[] } {
  const logs: string[] = [];
  const process = forkEngine({});
  process.onLog((line) => logs.push(line));
  const client = new EngineClient(process, (problem) => logs.push(`protocol: ${problem}`));
  started.push(client);
  return { client, logs };
}

/** An engine with the test model loaded. */
export async function startEngine(options: Partial<LoadOptionsInput> = {}): Promise<EngineClient> {
  const { client } = spawnEngine();
  await client.load({ modelPath: testModelPath(), contextSize: 1024, slots: 2, threads: 1, ...options });
  return client;
}

/** Deterministic filler tokens (ids of ordinary pieces in the test vocabulary). */
export function promptTokens(length: number, offset = 0): number[] {
  return Array.from({ length }, (_, i) => 300 + ((i * 7 + offset) % 300));
}

/** At temperature 0 the test model answers this chat message (after "Be brief.") with over 3,000 tokens: seconds of streaming. */
export const LONG_ANSWER_PROMPT = 'Count to a thousand.';

export { waitFor } from './wait-for.js';

/**
 * Both engine kinds for a `describe.each`, each with whether it can run here: llama-server only where its
 * binary is built (the skip's reason is printed once, for `part`).
 */
export function engineKinds(part: string): { kind: 'node-llama-cpp' | 'llama-server'; present: boolean }[] {
  const present = findLlamaServer() !== null;
  if (!present) console.log(`skipped: ${part} on a llama-server engine needs the llama-server binary (npm run build:llama-server); it was not found`);
  return [
    { kind: 'node-llama-cpp', present: true },
    { kind: 'llama-server', present },
  ];
}
