/**
 * Adding an engine kind is one folder and one registration: a stand-in kind (test/fixtures/stand-in-kind/)
 * registered here serves a replica set of real engine children — routed, healed after a kill — and what it
 * cannot do (a live resize) is refused in words, asked of its capabilities, not of its class.
 */
import { describe, expect, it } from 'vitest';
import { parseRunConfig } from '../../core/config/run-config.js';
import { engineKindNames, registerEngineKind } from '../../core/engine-kinds/engine-kinds.js';
import { ReplicaSet } from '../../core/replicas/replica-set.js';
import { standInKind } from '../fixtures/stand-in-kind/stand-in-kind.js';
import { promptTokens, testModelPath, waitFor } from '../helpers/engines.js';
import { startReplicaSet, waitForState } from '../helpers/replica-sets.js';

registerEngineKind(standInKind);

describe('engine kinds', () => {
  it('refuses a kind nobody registered, naming the registered ones', () => {
    expect(engineKindNames()).toEqual(['node-llama-cpp', 'llama-server', 'stand-in']);
    const config = parseRunConfig({ model: testModelPath(), gpu: 'cpu', engine: { kind: 'vllm' } });
    expect(() =>
      ReplicaSet.fromConfig(
        config,
        { detectedGpus: [], cpuCores: 2, defaultEngineKind: 'node-llama-cpp' },
        {
          spawn: () => {
            throw new Error('nothing is spawned');
          },
          log: () => {},
        },
      ),
    ).toThrow(
      /^engine\.kind: "vllm" is not an engine kind; use "node-llama-cpp" \(.+\), or "llama-server" \(.+\), or "stand-in" \(a test-only kind: an engine child driven directly\)$/,
    );
  });

  it('serves, routes and heals replicas of a kind registered from its own folder', async () => {
    const { set } = await startReplicaSet({ replicas: 2, engine: { kind: 'stand-in', contextSize: 1024, slots: 2, threads: 1 } });
    expect(set.replicaView().map((r) => r.state)).toEqual(['ready', 'ready']);
    const first = await set.generate({ tokens: promptTokens(64, 5), conversationId: 'c', maxTokens: 4, ignoreEos: true });
    expect(first.completionTokens).toHaveLength(4);
    // The conversation's next turn goes where its prefix is.
    const again = await set.generate({ tokens: [...promptTokens(64, 5), ...first.completionTokens, 7], conversationId: 'c', maxTokens: 2, ignoreEos: true });
    expect(again.replica).toBe(first.replica);

    const [verdict] = await set.precheck({ replica: first.replica, change: { contextSize: 2048 } });
    expect(verdict).toMatchObject({ fits: false, reason: `replica ${first.replica}'s engine kind cannot be rebuilt live` });

    const victim = set.driverOf(first.replica);
    const oldPid = victim.pid!;
    process.kill(oldPid, 'SIGKILL');
    await waitFor(() => (victim.pid !== oldPid && set.replicaView()[first.replica]!.state === 'ready' ? true : undefined), 'the killed replica to come back');
    await waitForState(set, first.replica, 'ready');
    const healed = await set.generate({ tokens: promptTokens(32, 9), maxTokens: 2, ignoreEos: true });
    expect(healed.completionTokens).toHaveLength(2);
  });
});
