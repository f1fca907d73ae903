/**
 * A crash mid-answer keeps the partial answer: `npm run serve` (a child) answers a chat through the
 * control API, is killed with SIGKILL once part of the answer is on disk, and is started again on the
 * same data dir: the conversation has the partial answer marked interrupted, and no temporary file of
 * an interrupted write is left in the conversations folder.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessageData, Conversation } from '../../common/conversation.js';
import type { Front } from '../../core/http/front-server.js';
import { openControl } from '../helpers/control.js';
import { LONG_ANSWER_PROMPT, testModelPath, waitFor } from '../helpers/engines.js';
import { startServeChild, type ServeChild } from '../helpers/serve-child.js';

const frontOf = async (serve: ServeChild): Promise<Front> => ({ url: await serve.base(), token: await serve.token() }) as Front;

describe('a crash mid-answer', () => {
  it('keeps the part of the answer saved before kill -9, read as interrupted after a restart; temporary files swept', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'manifold-data-'));
    const folder = join(dataDir, 'conversations');
    const config = join(mkdtempSync(join(tmpdir(), 'manifold-crash-')), 'run.json');
    writeFileSync(config, JSON.stringify({ model: testModelPath(), gpu: 'cpu', replicas: 1, engine: { contextSize: 8192, slots: 1, threads: 1 } }));
    const args = ['--config', config, '--port', '0', '--data-dir', dataDir];

    const first = startServeChild(args);
    const [enginePid] = await first.enginePids(1);
    const control = await openControl(await frontOf(first));
    const conversation = (await control.call('createConversation', { systemPrompt: 'Be brief.' })).value as Conversation;
    await control.call('updateConversation', { id: conversation.id, sampling: { maxTokens: 8000, temperature: 0 } });
    void control.call('sendMessage', { id: conversation.id, content: LONG_ANSWER_PROMPT }).catch(() => {});
    const file = join(folder, `${conversation.id}.json`);
    const saved = (): ChatMessageData | undefined => {
      const answer = (JSON.parse(readFileSync(file, 'utf8')) as Conversation).messages.at(-1);
      return answer?.role === 'assistant' && answer.content.length > 0 ? answer : undefined;
    };
    // Saved as it streams: the first part reaches the disk within about a second.
    const partial = await waitFor(saved, 'part of the answer on disk', 30_000);
    expect(partial).toMatchObject({ state: 'streaming', stopped: false, error: null, servedBy: null });
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();
    control.close();
    const streamed = control
      .events('chat')
      .map((p) => (p as { text: string }).text)
      .join('');
    // The engine notices its parent is gone and exits by itself.
    await waitFor(() => (spawnSync('kill', ['-0', String(enginePid)]).status !== 0 ? true : undefined), 'the orphaned engine to exit', 30_000);

    // What a kill during a write leaves: a temporary file of a process that is gone.
    const torn = `.${conversation.id}.json.${first.child.pid}-0123456789ab.tmp`;
    writeFileSync(join(folder, torn), '{"id":"');

    const second = startServeChild(args);
    const again = await openControl(await frontOf(second));
    const reopened = (await again.call('getConversation', { id: conversation.id })).value as Conversation;
    const answer = reopened.messages.at(-1)!;
    expect(answer).toMatchObject({ role: 'assistant', state: 'interrupted', writer: null, stopped: false, error: null });
    const onDisk = saved()!;
    expect(answer.content).toBe(onDisk.content);
    expect(answer.content.length).toBeGreaterThanOrEqual(partial.content.length);
    // Both are the start of the same answer (the last pieces sent may not have been read when the server died).
    expect(streamed.startsWith(answer.content) || answer.content.startsWith(streamed)).toBe(true);
    expect(readdirSync(folder)).toEqual([`${conversation.id}.json`]);
    expect(second.err).toContain(`conversations: removed 1 temporary files left by interrupted writes (${torn})`);

    // Regenerate replaces the interrupted answer with a whole one.
    await again.call('updateConversation', { id: conversation.id, sampling: { maxTokens: 8 } });
    const regenerated = (await again.call('regenerate', { id: conversation.id })).value as ChatMessageData;
    expect(regenerated).toMatchObject({ state: 'complete', servedBy: { completionTokens: expect.any(Number) } });
    const final = (await again.call('getConversation', { id: conversation.id })).value as Conversation;
    expect(final.messages.map((m) => [m.role, m.state])).toEqual([
      ['user', 'complete'],
      ['assistant', 'complete'],
    ]);
    again.close();
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 180_000);
});
