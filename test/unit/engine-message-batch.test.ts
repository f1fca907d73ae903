/**
 * A child sends the messages of one event-loop turn as one IPC message (an array when several): core's
 * engine client takes each element in order, as if it had come alone, and a bad element is reported
 * without losing the others. The process here is a message pipe the test writes into (no engine runs).
 */
import { describe, expect, it } from 'vitest';
import type { GenerateDone } from '../../common/engine-protocol.js';
import { EngineClient, type TokenChunk } from '../../core/engine/engine-client.js';
import type { EngineProcess } from '../../core/engine/engine-process.js';

function pipe() {
  let deliver: (message: unknown) => void = () => {};
  const sent: unknown[] = [];
  const process: EngineProcess = {
    pid: undefined,
    send: (message) => sent.push(message) > 0,
    onMessage: (listener) => {
      deliver = listener;
    },
    onExit: () => {},
    onLog: () => {},
    kill: () => {},
  };
  return { process, sent, deliver: (message: unknown) => deliver(message) };
}

const done = (tokens: number[], text: string): GenerateDone => ({
  finishReason: 'length',
  stoppedBy: null,
  text,
  completionTokens: tokens,
  usage: { promptTokens: 1, completionTokens: tokens.length },
  slot: 0,
  reusedTokens: 0,
  heldTokens: 1 + tokens.length,
  timings: { queuedMs: 0, prefillMs: 1, decodeMs: 1, prefillTokens: 1, decodeTokensPerSecond: 1000 },
});

describe('engine messages batched by turn', () => {
  it('takes the elements of one IPC message in order, for several requests', async () => {
    const { process, deliver } = pipe();
    const client = new EngineClient(process);
    const chunks: Record<number, TokenChunk[]> = { 1: [], 2: [] };
    const a = client.generate({ tokens: [1] }, (c) => chunks[1]!.push(c));
    const b = client.generate({ tokens: [1] }, (c) => chunks[2]!.push(c));
    deliver([
      { type: 'started', id: a.id, slot: 0, reusedTokens: 0, queuedMs: 0 },
      { type: 'started', id: b.id, slot: 1, reusedTokens: 0, queuedMs: 0 },
      { type: 'tokens', id: a.id, tokens: [5], text: 'x' },
      { type: 'tokens', id: b.id, tokens: [6, 7], text: 'yz' },
    ]);
    deliver([
      { type: 'tokens', id: a.id, tokens: [8], text: 'w' },
      { type: 'done', id: a.id, result: done([5, 8], 'xw') },
    ]);
    deliver({ type: 'done', id: b.id, result: done([6, 7], 'yz') });
    expect(await a.started).toEqual({ slot: 0, reusedTokens: 0, queuedMs: 0 });
    expect((await a.done).text).toBe('xw');
    expect((await b.done).completionTokens).toEqual([6, 7]);
    expect(chunks).toEqual({
      1: [
        { tokens: [5], text: 'x' },
        { tokens: [8], text: 'w' },
      ],
      2: [{ tokens: [6, 7], text: 'yz' }],
    });
  });

  it('reports a malformed element and still takes the ones around it', async () => {
    const { process, deliver } = pipe();
    const problems: string[] = [];
    const client = new EngineClient(process, (problem) => problems.push(problem));
    const chunks: TokenChunk[] = [];
    const a = client.generate({ tokens: [1] }, (c) => chunks.push(c));
    deliver([
      { type: 'tokens', id: a.id, tokens: [5], text: 'x' },
      { type: 'tokens', id: a.id, tokens: [-1], text: 'bad' },
      { type: 'done', id: a.id, result: done([5], 'x') },
    ]);
    expect((await a.done).text).toBe('x');
    expect(chunks).toEqual([{ tokens: [5], text: 'x' }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('engine sent a malformed message');
  });
});
