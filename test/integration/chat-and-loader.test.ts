/**
 * The UI's core calls over the control WebSocket with real engines: the loader (models listed, a GGUF
 * inspected, a corrupt or missing file refused clearly, the model loaded into an idle workstation with
 * its steps), and the chat (streamed pieces, who served it, reuse on the next turn, stop, regenerate),
 * conversations stored atomically and a torn file reported as damaged, never as an empty chat.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessageData, Conversation } from '../../common/conversation.js';
import { openControl, type ControlClient } from '../helpers/control.js';
import { testModelPath, waitFor } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';

const value = async <T>(control: ControlClient, name: string, args: unknown = {}): Promise<T> => {
  const answer = await control.call(name, args);
  if (!answer.ok) throw new Error(answer.error);
  return answer.value as T;
};

describe('loader and chat over the contract', () => {
  it('loads the model into an idle workstation, then chats with streaming, reuse, stop and regenerate, stored on disk', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'manifold-data-'));
    const modelsDir = mkdtempSync(join(tmpdir(), 'manifold-models-'));
    const corrupt = join(modelsDir, 'corrupt.gguf');
    writeFileSync(corrupt, 'GGUF but not really');
    const served = await startServed(undefined, { dataDir, modelsDir, front: { eventIntervalMs: 200 }, idle: true });
    const control = await openControl(served.front);
    expect(await value(control, 'getInfo')).toMatchObject({ status: 'idle', replicas: 0, model: '' });
    expect((await control.call('sendMessage', { id: 'nope', content: 'x' })).error).toMatch(/no conversation nope/);

    expect(await value(control, 'listModels')).toEqual({ modelsDir, recent: [], found: [{ path: corrupt, bytes: 19 }] });
    expect((await control.call('inspectModel', { path: corrupt })).error).toMatch(new RegExp(`^${corrupt}: `));
    expect((await control.call('inspectModel', { path: join(modelsDir, 'gone.gguf') })).error).toMatch(/model file not found/);
    expect((await control.call('loadModel', { path: corrupt, gpus: 'cpu' })).error).toMatch(new RegExp(`^${corrupt}: `));
    const inspection = await value<{ architecture: string; fits: { fits: boolean; group: string }[] }>(control, 'inspectModel', {
      path: testModelPath(),
      replicas: 2,
      contextSize: 1024,
    });
    expect(inspection).toMatchObject({ architecture: 'llama', quantisation: 'F32', layers: 2, contextLength: 4096 });
    expect(inspection.fits).toEqual([expect.objectContaining({ group: 'CPU (RAM), 2 replicas', fits: true })]);

    const info = await value(control, 'loadModel', { path: testModelPath(), replicas: 2, gpus: 'cpu', contextSize: 1024, slots: 2 });
    expect(info).toMatchObject({ status: 'ok', replicas: 2, replicas_alive: 2 });
    expect(control.events('load').map((s) => (s as { step: string }).step)).toEqual(expect.arrayContaining(['validate', 'arena', 'replicas', 'ready']));
    expect((await value<{ recent: string[] }>(control, 'listModels')).recent).toEqual([testModelPath()]);

    // A short first turn (under one 64-token block) still brings its next turn back to its replica and slot,
    // though the other replica, with fewer routed, would win the tie otherwise (both start at 0 after a load).
    const short = await value<Conversation>(control, 'createConversation', {});
    await value(control, 'updateConversation', { id: short.id, sampling: { maxTokens: 8, seed: 1 } });
    const hi = await value<ChatMessageData>(control, 'sendMessage', { id: short.id, content: 'hi' });
    const next = await value<ChatMessageData>(control, 'sendMessage', { id: short.id, content: 'and?' });
    expect(hi.servedBy!.promptTokens).toBeLessThan(64);
    expect(next.servedBy).toMatchObject({ replica: hi.servedBy!.replica, slot: hi.servedBy!.slot });
    expect(next.servedBy!.reusedTokens).toBeGreaterThan(0);
    await value(control, 'deleteConversation', { id: short.id });

    const conversation = await value<Conversation>(control, 'createConversation', { systemPrompt: 'Be brief.' });
    await value(control, 'updateConversation', { id: conversation.id, sampling: { maxTokens: 24, temperature: 0 } });
    const long = 'Tell me everything about replicas, slots and prefix caches, in detail, with examples and caveats, please.';
    const first = await value<ChatMessageData>(control, 'sendMessage', { id: conversation.id, content: long });
    const pieces = control.events('chat').filter((p) => (p as { messageId: string }).messageId === first.id) as { text: string }[];
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((p) => p.text).join('')).toBe(first.content);
    expect(first.servedBy).toMatchObject({ reusedTokens: 0, completionTokens: 24 });
    const second = await value<ChatMessageData>(control, 'sendMessage', { id: conversation.id, content: 'And then?' });
    expect(second.servedBy!.replica).toBe(first.servedBy!.replica);
    expect(second.servedBy!.reusedTokens).toBeGreaterThanOrEqual(64);

    // A settings change sent while an answer is asked for is kept, and so is the answer (one change at a time).
    const settings = control.call('updateConversation', { id: conversation.id, sampling: { topK: 7 } });
    const again = await value<ChatMessageData>(control, 'regenerate', { id: conversation.id });
    expect((await settings).ok).toBe(true);
    const stored = await value<Conversation>(control, 'getConversation', { id: conversation.id });
    expect(stored.sampling).toMatchObject({ topK: 7, maxTokens: 24 });
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(stored.messages[3]!.id).toBe(again.id);
    // The answer regenerated is kept as a version of the new one.
    expect(stored.messages[3]!.versions).toEqual([expect.objectContaining({ content: second.content, servedBy: second.servedBy })]);
    expect(stored.title).toBe(long.slice(0, 48));

    await value(control, 'updateConversation', { id: conversation.id, sampling: { maxTokens: 4000 } });
    const earlier = new Set(control.events('chat').map((p) => (p as { messageId: string }).messageId));
    const stopping = control.call('sendMessage', { id: conversation.id, content: 'Now a very long answer.' });
    const newPieces = (): number => control.events('chat').filter((p) => !earlier.has((p as { messageId: string }).messageId)).length;
    await waitFor(() => newPieces() > 60 || undefined, 'the long answer to stream', 60_000);
    expect(await value(control, 'stopGeneration', { id: conversation.id })).toEqual({ stopped: true });
    const stopped = (await stopping).value as ChatMessageData;
    expect(stopped.stopped).toBe(true);
    expect(stopped.servedBy!.completionTokens).toBeLessThan(4000);

    // On disk: one file per conversation, no temporary files left; a torn file is reported, not emptied.
    const files = readdirSync(join(dataDir, 'conversations'));
    expect(files).toEqual([`${conversation.id}.json`]);
    expect(JSON.parse(readFileSync(join(dataDir, 'conversations', files[0]!), 'utf8')).messages).toHaveLength(6);
    const torn = join(dataDir, 'conversations', '0000-torn.json');
    writeFileSync(torn, '{"id":"0000-torn","title":"half","messages":[{"id":"m1","ro');
    const list = await value<{ id: string; damaged: string | null }[]>(control, 'listConversations');
    expect(list.find((c) => c.id === '0000-torn')!.damaged).toMatch(/not valid JSON .* a torn write\?/);
    expect((await control.call('getConversation', { id: '0000-torn' })).error).toMatch(/^conversation 0000-torn is damaged: /);
    expect((await control.call('sendMessage', { id: '0000-torn', content: 'hi' })).error).toMatch(/damaged/);
    expect(readFileSync(torn, 'utf8')).toBe('{"id":"0000-torn","title":"half","messages":[{"id":"m1","ro');
    control.close();
  });
});
