/**
 * The chat window: conversations on the left; the open one with its settings, messages (each with Copy,
 * a user message with Edit to change and resend it; the list follows the latest message) and composer;
 * an empty conversation says what to do, and where to load a model when none is loaded. A conversation
 * stored from the API is marked "API" in the list, and its tool calls and results show as blocks.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { selectIsStreaming, selectShownMessages } from '../../store/chat-slice.js';
import { useApp } from '../../store/use-app-store.js';
import { ChatSettings } from './ChatSettings.js';
import { JsonToggle, parseJsonChoice, type JsonChoice } from './JsonToggle.js';
import { Markdown } from './Markdown.js';
import { ThinkingBlock } from './ThinkingBlock.js';
import { ToolCallBlocks, ToolResultBlock } from './ToolBlocks.js';

/** Where this tab keeps the id of its open conversation. */
const OPEN_CONVERSATION_KEY = 'manifold-open-conversation';

export function ChatView({ onOpenModels }: { onOpenModels: () => void }) {
  const { conversations, active, chatError } = useApp(useShallow((s) => ({ conversations: s.conversations, active: s.active, chatError: s.chatError })));
  const live = useApp((s) => s.streaming);
  const messages = useMemo(() => selectShownMessages({ active, streaming: live }), [active, live]);
  const streaming = selectIsStreaming({ active, streaming: live });
  /**
   * Each tool call in the history by its id, to label the result that answers it (stored messages only: a streamed answer has none, so not rebuilt per
   * token).
   */
  const calls = useMemo(() => new Map((active?.messages ?? []).flatMap((m) => m.toolCalls ?? []).map((call) => [call.id, call])), [active]);
  const actions = useApp(
    useShallow((s) => ({
      load: s.loadConversations,
      open: s.openConversation,
      create: s.newConversation,
      send: s.sendMessage,
      stop: s.stopAnswer,
      regenerate: s.regenerate,
      edit: s.editMessage,
      remove: s.deleteConversation,
    })),
  );
  const noModel = useApp((s) => s.info !== null && s.info.status === 'idle');
  // The generated test models (random weights, named so by build/test-model.ts): their answers are noise, and the window says so.
  const testModel = useApp((s) => s.info !== null && s.info.status !== 'idle' && s.info.model.startsWith('manifold-test-'));
  const [draft, setDraft] = useState('');
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const list = useRef<HTMLOListElement>(null);
  const composer = useRef<HTMLTextAreaElement>(null);
  /** Which version of a regenerated answer is shown, by message id (absent: the latest). */
  const [shownVersion, setShownVersion] = useState<Record<string, number>>({});
  const [jsonChoice, setJsonChoice] = useState<JsonChoice>({ on: false, schemaText: '' });
  const [jsonError, setJsonError] = useState<string | null>(null);
  useEffect(() => void actions.load(), [actions]);
  // A reload of this tab opens the conversation it had open (kept per tab).
  useEffect(() => {
    const kept = window.sessionStorage.getItem(OPEN_CONVERSATION_KEY);
    if (kept && !active) void actions.open(kept);
    // Only on mount: later changes are the user's.
  }, []);
  useEffect(() => {
    if (active) window.sessionStorage.setItem(OPEN_CONVERSATION_KEY, active.id);
    else window.sessionStorage.removeItem(OPEN_CONVERSATION_KEY);
  }, [active]);
  // On open and as each piece streams in, show the latest message.
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [messages]);

  const copy = (id: string, text: string): void => {
    void navigator.clipboard.writeText(text).then(() => setCopied(id));
  };
  const resend = (): void => {
    if (!editing || !editing.text.trim() || streaming) return;
    void actions.edit(editing.id, editing.text.trim());
    setEditing(null);
  };

  const send = (): void => {
    const text = draft.trim();
    if (!text || streaming) return;
    const { json, error } = parseJsonChoice(jsonChoice);
    setJsonError(error ?? null);
    if (error) return;
    setDraft('');
    void actions.send(text, json);
  };

  return (
    <div className="chat">
      <aside className="conversations" aria-label="conversations">
        <button className="primary" onClick={() => void actions.create().then(() => composer.current?.focus())}>
          New chat
        </button>
        <ul>
          {conversations.map((c) => (
            <li key={c.id} className={c.id === active?.id ? 'active' : c.damaged ? 'damaged' : ''}>
              <button className="link" onClick={() => void actions.open(c.id)} title={c.damaged ?? c.title}>
                {c.title}
              </button>
              {c.source === 'api' && (
                <span className="badge" title="stored from the API (store: true)">
                  API
                </span>
              )}
              {c.damaged && <span className="badge error">damaged</span>}
              <button className="icon" aria-label={`delete ${c.title}`} onClick={() => void actions.remove(c.id)}>
                ×
              </button>
            </li>
          ))}
        </ul>
      </aside>
      <section className="conversation">
        {active && <ChatSettings key={active.id} />}
        {testModel && (
          <p className="note test-model" data-testid="test-model-note">
            This is Manifold&apos;s generated test model: random weights, so its answers are noise.{' '}
            <button className="link" onClick={onOpenModels}>
              Load a real model
            </button>
          </p>
        )}
        {chatError && (
          <p className="error" role="alert">
            {chatError}
          </p>
        )}
        <ol className="messages" aria-label="messages" ref={list}>
          {messages.length === 0 && (
            <li className="chat-empty" data-testid="chat-empty">
              {noModel ? (
                <>
                  <p>No model is loaded, so nothing can answer yet.</p>
                  <button className="primary" onClick={onOpenModels}>
                    Load a model on the Models page
                  </button>
                </>
              ) : (
                <p>Type a message below and press Enter to start. Each conversation is kept, and stays on the replica that holds its prefix.</p>
              )}
            </li>
          )}
          {messages.map((latest, index) => {
            // An answer regenerated before keeps its earlier versions: the one picked with ‹ › is shown.
            const versions = latest.versions ?? [];
            const picked = Math.min(shownVersion[latest.id] ?? versions.length, versions.length);
            const m = picked < versions.length ? { ...latest, ...versions[picked]!, toolCalls: undefined, finishReason: undefined } : latest;
            return (
              <li
                key={m.id}
                className={`message ${m.role}${m.streaming ? ' streaming' : ''}${m.state === 'interrupted' ? ' interrupted' : ''}`}
                data-testid={m.role === 'assistant' ? 'answer' : m.role === 'tool' ? 'tool-message' : 'question'}
              >
                {editing?.id === m.id ? (
                  <div className="edit">
                    <textarea aria-label="edit message" value={editing.text} onChange={(e) => setEditing({ id: m.id, text: e.target.value })} />
                    <button className="primary" onClick={resend} disabled={!editing.text.trim() || streaming}>
                      Save and resend
                    </button>
                    <button onClick={() => setEditing(null)}>Cancel</button>
                  </div>
                ) : m.role === 'assistant' ? (
                  <>
                    {m.reasoning ? <ThinkingBlock reasoning={m.reasoning} thinkingMs={m.thinkingMs} thinking={m.streaming && !m.content} /> : null}
                    {(m.content || !m.toolCalls?.length) && (m.content || !m.reasoning) && <Markdown text={m.content || (m.streaming ? '…' : '')} />}
                    {m.toolCalls?.length ? <ToolCallBlocks calls={m.toolCalls} /> : null}
                  </>
                ) : m.role === 'tool' ? (
                  <ToolResultBlock content={m.content} callId={m.toolCallId ?? ''} call={calls.get(m.toolCallId ?? '')} />
                ) : (
                  <p className="typed">{m.content}</p>
                )}
                {!m.streaming && editing?.id !== m.id && (
                  <p className="message-actions">
                    {m.content && (
                      <button className="link" onClick={() => copy(m.id, m.content)} aria-label={`copy ${m.role === 'user' ? 'message' : 'answer'}`}>
                        {copied === m.id ? 'Copied' : 'Copy'}
                      </button>
                    )}
                    {versions.length > 0 && (
                      <span className="versions" aria-label="answer versions">
                        <button
                          className="link"
                          aria-label="earlier answer"
                          disabled={picked === 0}
                          onClick={() => setShownVersion({ ...shownVersion, [latest.id]: picked - 1 })}
                        >
                          ‹
                        </button>
                        <span data-testid="version">
                          {picked + 1}/{versions.length + 1}
                        </span>
                        <button
                          className="link"
                          aria-label="later answer"
                          disabled={picked === versions.length}
                          onClick={() => setShownVersion({ ...shownVersion, [latest.id]: picked + 1 })}
                        >
                          ›
                        </button>
                      </span>
                    )}
                    {m.role === 'user' && !streaming && (
                      <button className="link" onClick={() => setEditing({ id: m.id, text: m.content })}>
                        Edit
                      </button>
                    )}
                  </p>
                )}
                {m.servedBy && (
                  <p className="served" data-testid="served-by">
                    replica {m.servedBy.replica} · slot {m.servedBy.slot ?? '—'} · reused <span data-testid="reused">{m.servedBy.reusedTokens}</span> of{' '}
                    {m.servedBy.promptTokens} prompt tokens · {m.servedBy.completionTokens} tokens
                    {m.servedBy.tokensPerSecond !== undefined ? ` · ${m.servedBy.tokensPerSecond.toFixed(1)} tok/s` : ''}
                    {m.servedBy.firstTokenMs !== undefined ? ` · first token ${(m.servedBy.firstTokenMs / 1000).toFixed(2)} s` : ''}
                    {m.finishReason ? ` · finish ${m.finishReason}` : ''}
                  </p>
                )}
                {m.stopped && <p className="note">stopped</p>}
                {m.state === 'interrupted' && (
                  <p className="note" data-testid="interrupted">
                    interrupted: the server stopped before this answer was finished
                    {index === messages.length - 1 && !streaming && (
                      <>
                        {' '}
                        <button className="link" onClick={() => void actions.regenerate()}>
                          Regenerate
                        </button>
                      </>
                    )}
                  </p>
                )}
                {m.error && <p className="error">{m.error}</p>}
              </li>
            );
          })}
        </ol>
        <JsonToggle choice={jsonChoice} onChange={setJsonChoice} error={jsonError} />
        <div className="composer">
          <textarea
            ref={composer}
            aria-label="message"
            value={draft}
            placeholder="Message (Enter sends, Shift+Enter for a new line)"
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                send();
              }
            }}
          />
          {streaming ? (
            <button onClick={() => void actions.stop()}>Stop</button>
          ) : (
            <>
              <button className="primary" onClick={send} disabled={!draft.trim()}>
                Send
              </button>
              <button onClick={() => void actions.regenerate()} disabled={!active || active.messages.length === 0}>
                Regenerate
              </button>
            </>
          )}
        </div>
      </section>
    </div>
  );
}
