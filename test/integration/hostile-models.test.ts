/**
 * Hostile model files (issue 14): a well-formed GGUF whose hyper-parameters trip llama.cpp's asserts.
 * With the header bounds bypassed, the tokenizer child takes the abort and this (the main) process reports
 * it; on a running workstation, a load of each hostile file fails with the reason and the model that was
 * serving keeps answering chats. (`serve --model` with them: serve-cli.test.ts.)
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoadStep } from '../../common/contract.js';
import type { ChatMessageData, Conversation } from '../../common/conversation.js';
import { parseRunConfig } from '../../core/config/run-config.js';
import { Tokenizer, TokenizerError } from '../../core/tokenizer.js';
import { openControl, type ControlClient } from '../helpers/control.js';
import { testModelPath } from '../helpers/engines.js';
import { HOSTILE_MODELS, hostile, writeHostileModel } from '../helpers/hostile-models.js';
import { startServed } from '../helpers/served.js';

const dir = mkdtempSync(join(tmpdir(), 'manifold-hostile-'));

const value = async <T>(control: ControlClient, name: string, args: unknown = {}): Promise<T> => {
  const answer = await control.call(name, args);
  if (!answer.ok) throw new Error(answer.error);
  return answer.value as T;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the tokenizer child with the header bounds bypassed', () => {
  it.each(['layers-600', 'heads-0', 'experts-0-used-4', 'kv-heads-3', 'feed-forward-512'].map(hostile))(
    '$name: the child aborts or refuses, and this process reports why',
    async (model) => {
      const path = await writeHostileModel(dir, model);
      const logs: string[] = [];
      const error = await Tokenizer.open(path, { probeWeights: true, testOnlySkipHeaderCheck: true, log: (line) => logs.push(line) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TokenizerError);
      const message = (error as Error).message;
      expect(message).toMatch(new RegExp(`^${path} failed validation: `));
      if (model.aborts) {
        expect(message).toMatch(
          /the tokenizer process exited \(code none, signal SIGABRT\) while loading the vocabulary — llama\.cpp: GGML_ASSERT\(.+\) failed$/,
        );
      } else {
        expect(message).toMatch(/the weights do not load: /);
      }
      const pid = Number(/\[tokenizer (\d+)\]/.exec(logs[0]!)?.[1]);
      expect(alive(pid)).toBe(false);
      expect(logs.some((l) => l.includes('exited: failed to load'))).toBe(true);
    },
    180_000,
  );
});

describe('loading hostile models on a running workstation', () => {
  it('refuses each with the reason, and the model that was serving keeps answering', async () => {
    const served = await startServed({ replicas: 1 }, { front: { eventIntervalMs: 200 } });
    const control = await openControl(served.front);
    const conversation = await value<Conversation>(control, 'createConversation', {});
    await value(control, 'updateConversation', { id: conversation.id, sampling: { maxTokens: 4, seed: 1 } });
    const before = await value<ChatMessageData>(control, 'sendMessage', { id: conversation.id, content: 'hello' });
    expect(before.error).toBeNull();

    // Through the loader's call: the header bounds answer first, before anything is unloaded.
    for (const model of HOSTILE_MODELS.filter((m) => m.problem !== null)) {
      const path = await writeHostileModel(dir, model);
      const answer = await control.call('loadModel', { path, gpus: 'cpu', replicas: 1, contextSize: 1024, slots: 2, replace: true });
      expect(answer.ok, model.name).toBe(false);
      expect(answer.error).toMatch(model.problem!);
    }

    // Within the bounds, but the weights do not match the metadata: the probe in the tokenizer child finds it.
    const probeOnly = await writeHostileModel(dir, hostile('feed-forward-512'));
    const refused = await control.call('loadModel', { path: probeOnly, gpus: 'cpu', replicas: 1, contextSize: 1024, slots: 2, replace: true });
    expect(refused.error).toMatch(new RegExp(`^loading ${probeOnly} failed: ${probeOnly} failed validation: the weights do not load: `));
    const steps = control.events('load') as LoadStep[];
    expect(steps.map((s) => s.step)).toEqual(['validate', 'validate', 'failed']);
    expect(steps.at(-1)!.detail).toMatch(/; manifold-test-tiny-\w+ keeps serving$/);

    // The workstation's own check, without the loader's inspection in front of it.
    const layers = await writeHostileModel(dir, hostile('layers-600'));
    await expect(served.workstation.load(parseRunConfig({ model: layers, gpu: 'cpu', replicas: 1 }))).rejects.toThrow(
      `${layers} failed validation: llama.block_count = 600 is outside 1..512 (llama.cpp's LLAMA_MAX_LAYERS)`,
    );

    expect(await value(control, 'getInfo')).toMatchObject({ status: 'ok', model: served.workstation.modelId, replicas: 1, replicas_alive: 1 });
    expect(served.workstation.modelPath).toBe(testModelPath());
    const after = await value<ChatMessageData>(control, 'sendMessage', { id: conversation.id, content: 'and now?' });
    expect(after.error).toBeNull();
    // Answered by the model that was serving (at most the conversation's 4 tokens: the random model may end early).
    expect(after.servedBy).toMatchObject({ replica: 0 });
    expect(after.servedBy!.completionTokens).toBeGreaterThanOrEqual(1);
    expect(after.servedBy!.completionTokens).toBeLessThanOrEqual(4);
    control.close();
  }, 300_000);
});
