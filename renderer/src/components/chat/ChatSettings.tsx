/** The open conversation's system prompt, sampling and (for a thinking model) thinking settings, saved with it. */
import { useEffect, useState } from 'react';
import type { ChatSampling } from '../../../../common/conversation.js';
import { useApp } from '../../store/use-app-store.js';

const THINKING: [ChatSampling['thinking'], string][] = [
  ['default', "Model's default"],
  ['off', 'Off'],
  ['low', 'On, low effort'],
  ['medium', 'On, medium effort'],
  ['high', 'On, high effort'],
];

export function ChatSettings() {
  const active = useApp((s) => s.active)!;
  const update = useApp((s) => s.updateConversation);
  const thinks = useApp((s) => s.info?.thinks === true);
  const [system, setSystem] = useState(active.systemPrompt);
  useEffect(() => setSystem(active.systemPrompt), [active.id, active.systemPrompt]);
  const number = (text: string, fallback: number): number => (Number.isFinite(Number(text)) && text.trim() !== '' ? Number(text) : fallback);
  return (
    <details className="settings">
      <summary>System prompt and sampling</summary>
      <label>
        System prompt
        <textarea
          value={system}
          onChange={(e) => setSystem(e.target.value)}
          onBlur={() => system !== active.systemPrompt && void update({ systemPrompt: system })}
        />
      </label>
      <div className="form-row">
        <label>
          Temperature
          <input
            type="number"
            step="0.1"
            min="0"
            max="2"
            defaultValue={active.sampling.temperature}
            onBlur={(e) => {
              // OpenAI's range, 0 to 2: the field shows what is sent.
              const temperature = Math.min(2, Math.max(0, number(e.target.value, 0.8)));
              e.target.value = String(temperature);
              void update({ sampling: { temperature } });
            }}
          />
        </label>
        <label>
          Top-p
          <input
            type="number"
            step="0.05"
            min="0"
            max="1"
            defaultValue={active.sampling.topP}
            onBlur={(e) => void update({ sampling: { topP: number(e.target.value, 0.95) } })}
          />
        </label>
        <label>
          Top-k
          <input
            type="number"
            min="0"
            defaultValue={active.sampling.topK}
            onBlur={(e) => void update({ sampling: { topK: Math.round(number(e.target.value, 40)) } })}
          />
        </label>
        <OptionalCount label="Seed" empty="random" value={active.sampling.seed} onChange={(seed) => void update({ sampling: { seed } })} />
        <label>
          Max tokens
          <input
            type="number"
            min="1"
            defaultValue={active.sampling.maxTokens}
            onBlur={(e) => void update({ sampling: { maxTokens: Math.max(1, Math.round(number(e.target.value, 256))) } })}
          />
        </label>
      </div>
      {thinks && (
        <div className="form-row">
          <label>
            Thinking
            <select value={active.sampling.thinking} onChange={(e) => void update({ sampling: { thinking: e.target.value as ChatSampling['thinking'] } })}>
              {THINKING.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <OptionalCount
            label="Thinking budget (tokens)"
            title="The most tokens the model may think before it answers; then its thinking is closed and it answers"
            empty="no limit"
            value={active.sampling.thinkingBudget}
            onChange={(thinkingBudget) => void update({ sampling: { thinkingBudget } })}
          />
        </div>
      )}
    </details>
  );
}

/** A whole number ≥ 0 that may be left empty (null), saved when the field is left. */
function OptionalCount({
  label,
  title,
  empty,
  value,
  onChange,
}: {
  label: string;
  title?: string;
  empty: string;
  value: number | null;
  onChange: (value: number | null) => void;
}) {
  return (
    <label title={title}>
      {label}
      <input
        type="number"
        min="0"
        placeholder={empty}
        defaultValue={value ?? ''}
        onBlur={(e) => {
          const text = e.target.value.trim();
          onChange(text === '' || !Number.isFinite(Number(text)) ? null : Math.max(0, Math.round(Number(text))));
        }}
      />
    </label>
  );
}
