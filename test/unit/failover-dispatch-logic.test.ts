/**
 * Failover in the dispatcher, with fake replica clients (pure dispatch logic; the engines' own deaths are
 * tested with real children in replica-faults and remote-topology): a request its replica lost before the
 * first token goes to another replica, and one no replica can take any more is refused at once instead of
 * waiting in the queue until its timeout; a request hears once that it was dispatched (its stream opens).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { GenerateDone, GenerateRequestInput } from '../../common/engine-protocol.js';
import type { ReplicaPlan } from '../../core/config/run-config.js';
import { EngineExitedError, type GenerationHandle } from '../../core/engine/engine-client.js';
import type { ReplicaDriver } from '../../core/kind/replica-driver.js';
import { NoReplicaError } from '../../core/replicas/replica-errors.js';
import { Replica } from '../../core/replicas/replica.js';
import { RequestDispatcher } from '../../core/replicas/request-dispatcher.js';
import { RoutingState } from '../../core/replicas/routing-state.js';

const done = (request: GenerateRequestInput): GenerateDone => ({
  finishReason: 'length',
  stoppedBy: null,
  text: 'x',
  completionTokens: [5],
  usage: { promptTokens: request.tokens.length, completionTokens: 1 },
  slot: 0,
  reusedTokens: 0,
  heldTokens: request.tokens.length + 1,
  timings: { queuedMs: 0, prefillMs: 1, decodeMs: 1, prefillTokens: request.tokens.length, decodeTokensPerSecond: 1000 },
});

/**
 * A ready replica whose client either answers (its token a microtask after the call, as a real client's
 * come after its send) or is lost under every request (and stays ready, as a llama-server that missed a
 * bound does). `sends` hears of each request its client is given.
 */
function fakeReplica(index: number, lost: boolean, sends: string[] = []): Replica {
  const handle = (request: GenerateRequestInput, onTokens?: (chunk: { tokens: number[]; text: string }) => void): GenerationHandle => {
    sends.push(`sent to ${index}`);
    const outcome = lost
      ? Promise.reject(new EngineExitedError({ code: null, signal: null }))
      : Promise.resolve().then(() => {
          onTokens?.({ tokens: [5], text: 'x' });
          return done(request);
        });
    return { id: 1, started: outcome.then(() => ({ slot: 0, reusedTokens: 0 }) as never), done: outcome, cancel: async () => false };
  };
  const driver = Object.assign(new EventEmitter(), { client: { generate: handle, slots: async () => [] } }) as unknown as ReplicaDriver;
  const plan = {
    index,
    gpus: [],
    cpu: true,
    env: {},
    engine: { slots: 1 },
    engineKind: 'node-llama-cpp',
    logFile: null,
    remote: null,
  } as unknown as ReplicaPlan;
  const replica = new Replica(plan, driver);
  replica.state = 'ready';
  replica.incarnation = 1;
  return replica;
}

function dispatcher(replicas: Replica[]): RequestDispatcher {
  return new RequestDispatcher({
    replicas,
    routing: new RoutingState('prefix'),
    queue: { maxWaiting: 8, timeoutMs: 60_000, cacheHoldMs: 0 },
    log: () => {},
    slotOffset: (replica) => replica,
  });
}

const request = { tokens: [1, 2, 3, 4], maxTokens: 1 };

describe('failover dispatch (logic, fake replica clients)', () => {
  it('sends a request its replica lost before the first token to another replica', async () => {
    const result = await dispatcher([fakeReplica(0, true), fakeReplica(1, false)]).generate(request);
    expect(result.replica).toBe(1);
    expect(result.failedOver).toEqual([0]);
  });

  it('tells a request it was dispatched once, when its first client has it, before its first token, and not again on failover', async () => {
    const events: string[] = [];
    const options = { onDispatched: (replica: number) => events.push(`dispatched to ${replica}`), onTokens: () => events.push('tokens') };
    const result = await dispatcher([fakeReplica(0, true, events), fakeReplica(1, false, events)]).generate(request, options);
    expect(result.failedOver).toEqual([0]);
    expect(events).toEqual(['sent to 0', 'dispatched to 0', 'sent to 1', 'tokens']);
  });

  it('refuses at once a request whose only replica lost it and stays ready in the same incarnation', async () => {
    const set = dispatcher([fakeReplica(0, true)]);
    const refused = set.generate(request);
    await expect(refused).rejects.toBeInstanceOf(NoReplicaError);
    await expect(refused).rejects.toThrow('replicas 0 died before answering and no other replica can take the request');
    expect(set.queue.size).toBe(0);
  });

  it('refuses a waiting failed-over request when the replica it could still go to dies', async () => {
    const lost = fakeReplica(0, true);
    const other = fakeReplica(1, false);
    other.state = 'healing';
    const set = dispatcher([lost, other]);
    const waiting = set.generate(request);
    await new Promise((resolve) => setImmediate(resolve));
    expect(set.queue.size).toBe(1);
    other.state = 'failed';
    set.replicaStateChanged();
    await expect(waiting).rejects.toBeInstanceOf(NoReplicaError);
  });
});
