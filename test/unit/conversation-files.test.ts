/**
 * What a crash leaves in the conversations folder: the temporary files of cut-off atomic writes are
 * swept (only our own pattern, only of processes that are gone), and an answer saved as streaming by
 * another run reads as interrupted, with what was written kept.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweepStaleTemps, writeFileAtomic } from '../../core/chat/atomic-file.js';
import { ConversationStore } from '../../core/chat/conversation-store.js';

/** The pid of a process that has exited (a real one, so the number was really used). */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

describe('sweepStaleTemps', () => {
  it('removes temporary files of gone processes, of this pid, without a pid, or abandoned; keeps the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifold-conv-'));
    const file = (name: string): string => {
      writeFileSync(join(dir, name), '{}');
      return name;
    };
    const gone = file(`.c1.json.${deadPid()}-0123456789ab.tmp`);
    const mine = file(`.c2.json.${process.pid}-0123456789ab.tmp`);
    const older = file('.c3.json.0123456789ab.tmp');
    const running = file(`.c4.json.${process.ppid}-0123456789ab.tmp`);
    const abandoned = file(`.c5.json.${process.ppid}-abcdef012345.tmp`);
    const hour = Date.now() / 1000 - 3600;
    utimesSync(join(dir, abandoned), hour, hour);
    const kept = [
      running,
      file('c1.json'),
      file('.c1.json.tmp'),
      file('notes.tmp'),
      file(`.c6.json.${deadPid()}-XYZ.tmp`),
      file(`c7.json.${deadPid()}-0123456789ab.tmp`),
    ];

    expect((await sweepStaleTemps(dir)).sort()).toEqual([gone, mine, older, abandoned].sort());
    expect(readdirSync(dir).sort()).toEqual(kept.sort());
  });

  it('names its own temporary files so the sweep knows them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifold-conv-'));
    await writeFileAtomic(join(dir, 'c.json'), 'x');
    expect(readdirSync(dir)).toEqual(['c.json']);
    // The temporary name this process uses, as a crash would leave it, is its own pid's: swept at the next start.
    writeFileSync(join(dir, `.c.json.${process.pid}-a1b2c3d4e5f6.tmp`), 'half');
    expect(await sweepStaleTemps(dir)).toEqual([`.c.json.${process.pid}-a1b2c3d4e5f6.tmp`]);
  });
});

describe('ConversationStore after a crash', () => {
  it('sweeps before it first reads, and reads another run’s streaming answer as interrupted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'manifold-data-'));
    const before = new ConversationStore(dataDir);
    const conversation = await before.create({});
    await before.update(conversation.id, (c) => {
      c.messages.push(
        { id: 'u', role: 'user', content: 'hi', servedBy: null, stopped: false, error: null, state: 'complete', writer: null },
        { id: 'a', role: 'assistant', content: 'half an ans', servedBy: null, stopped: false, error: null, state: 'streaming', writer: before.run },
      );
    });
    expect((await before.get(conversation.id)).messages[1]).toMatchObject({ state: 'streaming', writer: before.run });
    const folder = join(dataDir, 'conversations');
    writeFileSync(join(folder, `.${conversation.id}.json.${deadPid()}-00000000000a.tmp`), '{"torn');

    const lines: string[] = [];
    const after = new ConversationStore(dataDir, (line) => lines.push(line));
    const reopened = await after.get(conversation.id);
    expect(reopened.messages[1]).toMatchObject({ content: 'half an ans', state: 'interrupted', writer: null });
    expect(readdirSync(folder)).toEqual([`${conversation.id}.json`]);
    expect(lines).toEqual([expect.stringMatching(/^conversations: removed 1 temporary files left by interrupted writes/)]);
    // Reading does not rewrite the file; the next change saves it as interrupted.
    expect(JSON.parse(readFileSync(join(folder, `${conversation.id}.json`), 'utf8')).messages[1].state).toBe('streaming');
    await after.update(conversation.id, (c) => void (c.title = 'renamed'));
    expect(JSON.parse(readFileSync(join(folder, `${conversation.id}.json`), 'utf8')).messages[1].state).toBe('interrupted');
  });
});

describe('ConversationStore files across versions', () => {
  it('loads a file written before tool messages and sources, as from the window, and keeps tool messages of an API one', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'manifold-data-'));
    const folder = join(dataDir, 'conversations');
    const store = new ConversationStore(dataDir);
    await store.list();
    const old = {
      id: 'c-old',
      title: 'hi',
      systemPrompt: 's',
      sampling: { temperature: 0.8, topP: 0.95, topK: 40, maxTokens: 16, seed: null },
      messages: [{ id: 'u', role: 'user', content: 'hi', servedBy: null, stopped: false, error: null, state: 'complete', writer: null }],
      createdAt: 1,
      updatedAt: 1,
    };
    writeFileSync(join(folder, 'c-old.json'), JSON.stringify(old));
    expect(await store.list()).toEqual([{ id: 'c-old', title: 'hi', messages: 1, updatedAt: 1, source: 'window', damaged: null }]);
    expect((await store.get('c-old')).messages[0]).not.toHaveProperty('toolCalls');

    const base = { servedBy: null, stopped: false, error: null, state: 'complete' as const, writer: null };
    const stored = await store.create({
      title: 'weather',
      source: 'api',
      messages: [
        {
          id: 'a',
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
          finishReason: 'tool_calls',
          ...base,
        },
        { id: 't', role: 'tool', content: '{"temperature":21}', toolCallId: 'call_1', ...base },
      ],
    });
    const reread = await new ConversationStore(dataDir).get(stored.id);
    expect(reread.source).toBe('api');
    expect(reread.messages).toEqual(stored.messages);
  });
});
