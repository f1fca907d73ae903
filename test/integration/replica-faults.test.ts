/** Replicas under faults, with real engines: a killed engine, a hung engine (a node-llama-cpp child, a llama-server child), an engine that never starts. */
import { describe, expect, it } from 'vitest';
import { ReplicaDiedError } from '../../core/replicas/replica-errors.js';
import type { ReplicaSet } from '../../core/replicas/replica-set.js';
import type { ReplicaGenerateResult } from '../../core/replicas/request-dispatcher.js';
import { promptTokens, waitFor } from '../helpers/engines.js';
import { startReplicaSet, waitForState, engineOf, llamaServerOf } from '../helpers/replica-sets.js';

interface Stream {
  streamed: number[];
  byReplica: Set<number>;
  outcome: Promise<ReplicaGenerateResult | Error>;
}

/** 8 concurrent long streams over the set, each recording what it was sent. */
function eightStreams(set: ReplicaSet): Stream[] {
  return Array.from({ length: 8 }, (_, i) => {
    const streamed: number[] = [];
    const byReplica = new Set<number>();
    const outcome = set
      .generate(
        { tokens: promptTokens(100, i * 29), conversationId: `s${i}`, maxTokens: 250, sampling: { temperature: 0 }, ignoreEos: true },
        {
          onTokens: (chunk) => {
            streamed.push(...chunk.tokens);
            byReplica.add(chunk.replica);
          },
        },
      )
      .catch((error: Error) => error);
    return { streamed, byReplica, outcome };
  });
}

/** Checks the outcome of each stream after `victim` failed while some of them were producing. */
async function expectStreamsAfterFailure(streams: Stream[], victim: number): Promise<void> {
  const outcomes = await Promise.all(streams.map((s) => s.outcome));
  let died = 0;
  for (const [i, outcome] of outcomes.entries()) {
    const stream = streams[i]!;
    if (outcome instanceof Error) {
      // Only a stream that had already produced tokens on the victim may fail, and it says so.
      expect(outcome).toBeInstanceOf(ReplicaDiedError);
      expect((outcome as ReplicaDiedError).replica).toBe(victim);
      expect(stream.streamed.length).toBeGreaterThan(0);
      died++;
    } else {
      // Every token the client saw is its own request's, from one replica.
      expect(stream.streamed).toEqual(outcome.completionTokens);
      expect(stream.byReplica.size).toBe(1);
      expect(outcome.completionTokens).toHaveLength(250);
    }
  }
  expect(died).toBeGreaterThan(0);
  expect(died).toBeLessThan(8);
}

/**
 * These tests wait for events (tokens seen, exits, states), never for a fixed time; their bound is generous
 * because 2 replicas of 8 long streams on a busy 2-core machine once needed more than vitest's 60 s.
 */
const FAULT_TEST_TIMEOUT_MS = 240_000;

describe('replica faults', () => {
  it(
    'survives SIGKILL of one engine during 8 streams: queued requests are served elsewhere, a clear error after a token, then heals',
    async () => {
      const { set, logs } = await startReplicaSet({ replicas: 2 });
      const streams = eightStreams(set);
      // Wait until the victim is producing tokens for some of its requests.
      const victim = 0;
      await waitFor(() => (streams.some((s) => s.byReplica.has(victim) && s.streamed.length >= 3) ? true : undefined), 'tokens from replica 0', 120_000);
      const oldPid = engineOf(set, victim).pid;
      engineOf(set, victim).signal('SIGKILL');
      await expectStreamsAfterFailure(streams, victim);
      // Requests still waiting in core's queue were never bound to the victim: every one of them completed.
      // (Failover of a request bound to a dying engine before its first token: serve-under-faults.test.ts.)
      expect(logs.some((l) => l.startsWith(`[replica ${victim} ${oldPid}] exited: crashed (code none, signal SIGKILL)`))).toBe(true);

      await waitForState(set, victim, 'ready', 60_000);
      expect(engineOf(set, victim).pid).not.toBe(oldPid);
      const view = set.replicaView();
      expect(view.every((r) => r.state === 'ready')).toBe(true);
      const served = await Promise.all([0, 1].map(() => set.generate({ tokens: promptTokens(70, 5), maxTokens: 2, ignoreEos: true })));
      expect(served.every((r) => r.completionTokens.length === 2)).toBe(true);
    },
    FAULT_TEST_TIMEOUT_MS,
  );

  it(
    'forgets the blocks of a replica that died',
    async () => {
      const { set } = await startReplicaSet({ replicas: 2 });
      const conversation = promptTokens(256, 9);
      const first = await set.generate({ tokens: conversation, maxTokens: 2, ignoreEos: true });
      expect(set.heldPrefixTokens(first.replica, conversation)).toBe(256);
      engineOf(set, first.replica).signal('SIGKILL');
      await waitFor(() => (set.replicaView()[first.replica]!.state !== 'ready' ? true : undefined), 'the replica to leave ready');
      expect(set.heldPrefixTokens(first.replica, conversation)).toBe(0);
      // Meanwhile the other replica serves the conversation.
      const next = await set.generate({ tokens: conversation, maxTokens: 2, ignoreEos: true });
      expect(next.replica).not.toBe(first.replica);
    },
    FAULT_TEST_TIMEOUT_MS,
  );

  it(
    'declares a SIGSTOPped engine hung within its bound, kills it, and heals it',
    async () => {
      const hangTimeoutMs = 1500;
      const heartbeatMs = 200;
      const { set, logs } = await startReplicaSet({ replicas: 2 }, { watchdog: { heartbeatMs, hangTimeoutMs } });
      const streams = eightStreams(set);
      const victim = 1;
      await waitFor(() => (streams.some((s) => s.byReplica.has(victim) && s.streamed.length >= 3) ? true : undefined), 'tokens from replica 1', 120_000);
      const pid = engineOf(set, victim).pid!;
      const stoppedAt = Date.now();
      const exited = new Promise<{ kind: string }>((resolve) => engineOf(set, victim).once('exit', resolve));
      process.kill(pid, 'SIGSTOP');
      const reason = await exited;
      const detectedIn = Date.now() - stoppedAt;
      expect(reason.kind).toBe('hung');
      expect(detectedIn).toBeLessThan(hangTimeoutMs + 3 * heartbeatMs + 1000);
      expect(logs.some((l) => l.includes('hung: no heartbeat'))).toBe(true);
      await expectStreamsAfterFailure(streams, victim);
      await waitForState(set, victim, 'ready', 60_000);
      const served = await set.generate({ tokens: promptTokens(70, 1), maxTokens: 2, ignoreEos: true });
      expect(served.completionTokens).toHaveLength(2);
    },
    FAULT_TEST_TIMEOUT_MS,
  );

  it(
    'declares a SIGSTOPped llama-server child hung when its /health falls silent, kills it, and heals it',
    async () => {
      const hangTimeoutMs = 1500;
      const heartbeatMs = 200;
      const { set, logs } = await startReplicaSet(
        { replicas: 2, engine: { kind: 'llama-server', contextSize: 1024, slots: 1, threads: 1 } },
        { watchdog: { heartbeatMs, hangTimeoutMs } },
      );
      const victim = 1;
      const pid = llamaServerOf(set, victim).pid!;
      const stoppedAt = Date.now();
      const exited = new Promise<{ kind: string }>((resolve) => llamaServerOf(set, victim).once('exit', resolve));
      process.kill(pid, 'SIGSTOP');
      const reason = await exited;
      expect(reason.kind).toBe('hung');
      expect(Date.now() - stoppedAt).toBeLessThan(hangTimeoutMs + 3 * heartbeatMs + 1000);
      expect(logs.some((l) => l.includes(`[replica ${victim} ${pid}] hung: /health silent`))).toBe(true);
      // The other replica serves meanwhile, and the victim comes back as a new process.
      expect((await set.generate({ tokens: promptTokens(40, 3), maxTokens: 2, ignoreEos: true })).replica).toBe(0);
      await waitForState(set, victim, 'ready', 60_000);
      expect(llamaServerOf(set, victim).pid).not.toBe(pid);
    },
    FAULT_TEST_TIMEOUT_MS,
  );

  it(
    'retries an engine that crashes at every start with back-off, then marks it failed; the other keeps serving',
    async () => {
      const { set, logs } = await startReplicaSet({
        // Replica 1's Node cannot start: a preload module that does not exist makes the real child exit at once.
        replicas: [{ gpus: [] }, { gpus: [], env: { NODE_OPTIONS: '--import=/nonexistent/manifold-crash.mjs' } }],
        // A cooldown well above a crashing start's own time (≈1 s on a busy machine), so both waits are positive.
        heal: { cooldownMs: 2500, maxConsecutiveFailures: 3 },
      });
      await waitForState(set, 1, 'failed', 60_000);
      const waits = logs.filter((l) => l.startsWith('[replica 1] healing in')).map((l) => Number(/healing in (\d+) ms/.exec(l)![1]));
      expect(waits, logs.join('\n')).toHaveLength(2);
      // Back-off: the second wait is about twice the first (each measured from its own start).
      expect(waits[1]!, logs.join('\n')).toBeGreaterThan(waits[0]!);
      expect(logs.some((l) => l.includes('failed 3 times in a row'))).toBe(true);
      expect(set.info()).toMatchObject({ replicas: 2, replicas_alive: 1 });
      const served = await set.generate({ tokens: promptTokens(70), maxTokens: 2, ignoreEos: true });
      expect(served.replica).toBe(0);
    },
    FAULT_TEST_TIMEOUT_MS,
  );
});
