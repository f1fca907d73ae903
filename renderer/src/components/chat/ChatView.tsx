/** The chat window: conversations on the left; the open one with its settings, messages and composer. */
import { useEffect, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import { selectIsStreaming, selectShownMessages } from '../../store/chat-slice.js';
import { useApp } from '../../store/use-app-store.js';
import { ChatSettings } from './ChatSettings.js';
import { JsonToggle, parseJsonChoice, type JsonChoice } from './JsonToggle.js';
import { Markdown } from './Markdown.js';

export function ChatView() {
  const { conversations, active, chatError } = useApp(useShallow((s) => ({ conversations: s.conversations, active: s.active, chatError: s.chatError })));
  const live = useApp((s) => s.streaming);
  const messages = useMemo(() => selectShownMessages({ active, streaming: live }), [active, live]);
  const streaming = selectIsStreaming({ active, streaming: live });
  const actions = useApp(
    useShallow((s) => ({ load: s.loadConversations, open: s.openConversation, create: s.newConversation, send: s.sendMessage, stop: s.stopAnswer, regenerate: s.regenerate, remove: s.deleteConversation })),
  );
  const [draft, setDraft] = useState('');
  const [jsonChoice, setJsonChoice] = useState<JsonChoice>({ on: false, schemaText: '' });
  const [jsonError, setJsonError] = useState<string | null>(null);
  useEffect(() => void actions.load(), [actions]);

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
        <button className="primary" onClick={() => void actions.create()}>
          New chat
        </button>
        <ul>
          {conversations.map((c) => (
            <li key={c.id} className={c.id === active?.id ? 'active' : c.damaged ? 'damaged' : ''}>
              <button className="link" onClick={() => void actions.open(c.id)} title={c.damaged ?? c.title}>
                {c.title}
              </button>
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
        {chatError && (
          <p className="error" role="alert">
            {chatError}
          </p>
        )}
        <ol className="messages" aria-label="messages">
          {messages.map((m, index) => (
            <li key={m.id} className={`message ${m.role}${m.streaming ? ' streaming' : ''}${m.state === 'interrupted' ? ' interrupted' : ''}`} data-testid={m.role === 'assistant' ? 'answer' : 'question'}>
              {m.role === 'assistant' ? <Markdown text={m.content || (m.streaming ? '…' : '')} /> : <p>{m.content}</p>}
              {m.servedBy && (
                <p className="served" data-testid="served-by">
                  replica {m.servedBy.replica} · slot {m.servedBy.slot ?? '—'} · reused <span data-testid="reused">{m.servedBy.reusedTokens}</span> of {m.servedBy.promptTokens} prompt tokens ·{' '}
                  {m.servedBy.completionTokens} tokens
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
          ))}
        </ol>
        <JsonToggle choice={jsonChoice} onChange={setJsonChoice} error={jsonError} />
        <div className="composer">
          <textarea
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
