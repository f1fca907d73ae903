/**
 * Conversations on disk (DESIGN §7): one JSON file per conversation under `<data dir>/conversations`,
 * each written atomically. A file that does not parse or fails the schema (a torn write, a hand edit) is
 * listed as damaged with the reason and kept as it is: it is never shown as an empty chat, never
 * overwritten by one. Each store is one run (a random id): an answer saved as `streaming` by another
 * run was cut off by a crash and reads as `interrupted`. The temporary files of writes a crash cut off
 * are swept before the store first writes.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { chatSamplingSchema, conversationSchema, type ChatMessageData, type Conversation, type ConversationSummary } from '../../common/conversation.js';
import { sweepStaleTemps, writeFileAtomic } from './atomic-file.js';

export class ConversationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConversationError';
  }
}

const TITLE_CHARS = 48;

/** A conversation's title made from its first message. */
export const titleOf = (content: string): string => content.replace(/\s+/g, ' ').trim().slice(0, TITLE_CHARS) || 'New chat';

/** A new message with a fresh id, complete and served by no one unless `extra` says otherwise. */
export const newMessage = (role: ChatMessageData['role'], content: string, extra: Partial<ChatMessageData> = {}): ChatMessageData => ({
  id: randomUUID(),
  role,
  content,
  servedBy: null,
  stopped: false,
  error: null,
  state: 'complete',
  writer: null,
  ...extra,
});

type Read = { conversation: Conversation } | { damaged: string };

export class ConversationStore {
  private readonly dir: string;
  /** The last change queued per conversation: changes to one conversation run one after another. */
  private readonly queues = new Map<string, Promise<unknown>>();
  /** This start of the process; answers it streams are saved with it as their writer. */
  readonly run = randomUUID();
  private opened: Promise<void> | undefined;

  constructor(
    dataDir: string,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.dir = join(dataDir, 'conversations');
  }

  /** Makes the folder and sweeps the temporary files crashed writes left, once, before anything is read or written. */
  private ready(): Promise<void> {
    this.opened ??= (async () => {
      await mkdir(this.dir, { recursive: true });
      const swept = await sweepStaleTemps(this.dir);
      if (swept.length) this.log(`conversations: removed ${swept.length} temporary files left by interrupted writes (${swept.join(', ')})`);
    })();
    return this.opened;
  }

  private pathOf(id: string): string {
    if (!/^[a-z0-9-]{1,64}$/.test(id)) throw new ConversationError(`"${id}" is not a conversation id`);
    return join(this.dir, `${id}.json`);
  }

  private async read(id: string): Promise<Read> {
    await this.ready();
    let text: string;
    try {
      text = await readFile(this.pathOf(id), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ConversationError(`there is no conversation ${id}`);
      throw error;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      return {
        damaged: `its file is not valid JSON (${(error as Error).message}; ${text.length} bytes, a torn write?); it is kept as it is at ${this.pathOf(id)}`,
      };
    }
    const parsed = conversationSchema.safeParse(raw);
    if (!parsed.success)
      return {
        damaged: `its file does not hold a conversation (${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}); it is kept at ${this.pathOf(id)}`,
      };
    if (parsed.data.id !== id) return { damaged: `its file holds conversation ${parsed.data.id}; it is kept at ${this.pathOf(id)}` };
    for (const message of parsed.data.messages) {
      if (message.state === 'streaming' && message.writer !== this.run) Object.assign(message, { state: 'interrupted', writer: null });
    }
    return { conversation: parsed.data };
  }

  /** Every conversation, newest first; damaged ones listed with why. */
  async list(): Promise<ConversationSummary[]> {
    await this.ready();
    const ids = (await readdir(this.dir)).filter((n) => /^[a-z0-9-]{1,64}\.json$/.test(n)).map((n) => n.slice(0, -5));
    const summaries = await Promise.all(
      ids.map(async (id): Promise<ConversationSummary> => {
        const read = await this.read(id);
        if ('damaged' in read) return { id, title: `${id} (damaged)`, messages: 0, updatedAt: 0, source: 'window', damaged: read.damaged };
        const { title, messages, updatedAt, source } = read.conversation;
        return { id, title, messages: messages.length, updatedAt, source, damaged: null };
      }),
    );
    return summaries.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  /** The conversation; a damaged one is an error naming the damage, never an empty chat. */
  async get(id: string): Promise<Conversation> {
    const read = await this.read(id);
    if ('damaged' in read) throw new ConversationError(`conversation ${id} is damaged: ${read.damaged}`);
    return read.conversation;
  }

  /** A new conversation: an empty one from the window, or one stored whole from the API (`messages`, `source: 'api'`). */
  async create(fields: {
    title?: string | undefined;
    systemPrompt?: string | undefined;
    messages?: ChatMessageData[];
    source?: Conversation['source'];
  }): Promise<Conversation> {
    const now = Date.now();
    const conversation: Conversation = {
      id: randomUUID(),
      title: fields.title ?? 'New chat',
      systemPrompt: fields.systemPrompt ?? 'You are a helpful assistant.',
      sampling: chatSamplingSchema.parse({}),
      messages: fields.messages ?? [],
      createdAt: now,
      updatedAt: now,
      source: fields.source ?? 'window',
    };
    await this.save(conversation);
    return conversation;
  }

  /**
   * Reads, changes and saves conversation `id` as one step: changes to the same conversation (a message
   * sent while the settings change) are applied in the order they were asked for, none lost.
   */
  update(id: string, change: (conversation: Conversation) => void): Promise<Conversation> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.then(
      () => this.applyChange(id, change),
      () => this.applyChange(id, change),
    );
    this.queues.set(id, next);
    void next
      .finally(() => {
        if (this.queues.get(id) === next) this.queues.delete(id);
      })
      .catch(() => {});
    return next;
  }

  private async applyChange(id: string, change: (conversation: Conversation) => void): Promise<Conversation> {
    const conversation = await this.get(id);
    change(conversation);
    conversation.updatedAt = Date.now();
    await this.save(conversation);
    return conversation;
  }

  async save(conversation: Conversation): Promise<void> {
    await this.ready();
    await writeFileAtomic(this.pathOf(conversation.id), `${JSON.stringify(conversationSchema.parse(conversation), null, 1)}\n`);
  }

  async delete(id: string): Promise<void> {
    await this.ready();
    await unlink(this.pathOf(id)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}
