/** Bad input never kills the engine: each case is a typed error and the engine answers afterwards. */
import { copyFile, mkdtemp, open, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineMessage } from '../../common/engine-protocol.js';
import { EngineRequestError } from '../../core/engine/engine-client.js';
import { promptTokens, spawnEngine, startEngine, testModelPath, waitFor } from '../helpers/engines.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'manifold-errors-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function expectCode(promise: Promise<unknown>, code: string): Promise<EngineRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineRequestError);
  expect((error as EngineRequestError).code).toBe(code);
  return error as EngineRequestError;
}

describe('engine errors', () => {
  it('refuses a missing file, a truncated GGUF and a wrong magic, then loads a good model in the same engine', async () => {
    const { client } = spawnEngine();
    const missing = await expectCode(client.load({ modelPath: join(dir, 'nope.gguf') }), 'model_not_found');
    expect(missing.message).toContain('nope.gguf');

    const truncated = join(dir, 'truncated.gguf');
    await copyFile(testModelPath(), truncated);
    await truncate(truncated, 100_000);
    const cut = await expectCode(client.load({ modelPath: truncated }), 'model_invalid');
    expect(cut.message).toMatch(/past the end|ends inside/);

    const wrongMagic = join(dir, 'magic.gguf');
    const bytes = await readFile(testModelPath());
    bytes.write('GGML', 0);
    await writeFile(wrongMagic, bytes);
    const magic = await expectCode(client.load({ modelPath: wrongMagic }), 'model_invalid');
    expect(magic.message).toContain('not a GGUF file');

    expect(await client.ping()).toBeGreaterThan(0);
    const info = await client.load({ modelPath: testModelPath(), contextSize: 256, slots: 1, threads: 1 });
    expect(info.sizes).toMatchObject({ contextSize: 256, slots: 1 });
    const done = await client.generate({ tokens: promptTokens(10), maxTokens: 3, ignoreEos: true }).done;
    expect(done.completionTokens).toHaveLength(3);
  });

  it('refuses a hostile header that claims a huge metadata array, without hanging', async () => {
    const { client } = spawnEngine();
    const hostile = join(dir, 'hostile.gguf');
    const header = Buffer.alloc(64);
    header.writeUInt32LE(0x46554747, 0);
    header.writeUInt32LE(3, 4);
    header.writeBigUInt64LE(0n, 8); // tensors
    header.writeBigUInt64LE(1n, 16); // metadata entries
    header.writeBigUInt64LE(3n, 24);
    header.write('abc', 32);
    header.writeUInt32LE(9, 35); // ARRAY
    header.writeUInt32LE(4, 39); // of UINT32
    header.writeBigUInt64LE(0xffffffffffffn, 43); // absurd length
    const handle = await open(hostile, 'w');
    await handle.write(header);
    await handle.close();
    const error = await expectCode(client.load({ modelPath: hostile }), 'model_invalid');
    expect(error.message).toContain('array length of abc');
    expect(await client.ping()).toBeGreaterThan(0);
  });

  it('answers an unknown message type and a malformed message with typed errors and keeps serving', async () => {
    const engine = await startEngine({ slots: 1, contextSize: 256 });
    const replies: EngineMessage[] = [];
    // The child sends the messages of one event-loop turn as one array (engine-bin/transport.ts).
    engine.process.onMessage((m) => replies.push(...((Array.isArray(m) ? m : [m]) as EngineMessage[])));
    engine.process.send({ type: 'teleport', id: 9001 });
    engine.process.send({ type: 'generate', id: 9002, request: { tokens: 'not tokens' } });
    engine.process.send('just a string');
    const errors = await waitFor(() => {
      const found = replies.filter((r) => r.type === 'error');
      return found.length >= 3 ? found : undefined;
    }, 'three error replies');
    expect(errors[0]).toMatchObject({ type: 'error', id: 9001, code: 'unknown_type' });
    expect(errors[1]).toMatchObject({ type: 'error', id: 9002, code: 'bad_message' });
    expect(errors[1]!.type === 'error' && errors[1]!.message).toContain('request.tokens');
    expect(errors[2]).toMatchObject({ type: 'error', id: null, code: 'bad_message' });
    const done = await engine.generate({ tokens: promptTokens(10), maxTokens: 2, ignoreEos: true }).done;
    expect(done.completionTokens).toHaveLength(2);
  });

  it('refuses a prompt longer than a slot holds, and generation before load', async () => {
    const { client } = spawnEngine();
    await expectCode(client.generate({ tokens: promptTokens(5) }).done, 'not_loaded');
    await client.load({ modelPath: testModelPath(), contextSize: 256, slots: 1, threads: 1 });
    const error = await expectCode(client.generate({ tokens: promptTokens(300) }).done, 'prompt_too_long');
    expect(error.message).toContain('300 tokens');
    await expectCode(client.load({ modelPath: testModelPath() }), 'already_loaded');
    const done = await client.generate({ tokens: promptTokens(250), maxTokens: 50, ignoreEos: true }).done;
    // A prompt that nearly fills the slot ends at the slot's capacity, not past it.
    expect(done.finishReason).toBe('length');
    expect(done.completionTokens.length).toBe(6);
  });
});
