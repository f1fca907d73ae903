/** The open conversation's system prompt and sampling settings (saved with it). */
import { useEffect, useState } from 'react';
import { useApp } from '../../store/use-app-store.js';

export function ChatSettings() {
  const active = useApp((s) => s.active)!;
  const update = useApp((s) => s.updateConversation);
  const [system, setSystem] = useState(active.systemPrompt);
  useEffect(() => setSystem(active.systemPrompt), [active.id, active.systemPrompt]);
  const number = (text: string, fallback: number): number => (Number.isFinite(Number(text)) && text.trim() !== '' ? Number(text) : fallback);
  return (
    <details className="settings">
      <summary>System prompt and sampling</summary>
      <label>
        System prompt
        <textarea value={system} onChange={(e) => setSystem(e.target.value)} onBlur={() => system !== active.systemPrompt && void update({ systemPrompt: system })} />
      </label>
      <div className="form-row">
        <label>
          Temperature
          <input type="number" step="0.1" min="0" max="5" defaultValue={active.sampling.temperature} onBlur={(e) => void update({ sampling: { temperature: number(e.target.value, 0.8) } })} />
        </label>
        <label>
          Top-p
          <input type="number" step="0.05" min="0" max="1" defaultValue={active.sampling.topP} onBlur={(e) => void update({ sampling: { topP: number(e.target.value, 0.95) } })} />
        </label>
        <label>
          Top-k
          <input type="number" min="0" defaultValue={active.sampling.topK} onBlur={(e) => void update({ sampling: { topK: Math.round(number(e.target.value, 40)) } })} />
        </label>
        <label>
          Seed
          <input
            type="number"
            min="0"
            placeholder="random"
            defaultValue={active.sampling.seed ?? ''}
            onBlur={(e) => void update({ sampling: { seed: e.target.value.trim() === '' ? null : Math.max(0, Math.round(number(e.target.value, 0))) } })}
          />
        </label>
        <label>
          Max tokens
          <input type="number" min="1" defaultValue={active.sampling.maxTokens} onBlur={(e) => void update({ sampling: { maxTokens: Math.max(1, Math.round(number(e.target.value, 256))) } })} />
        </label>
      </div>
    </details>
  );
}
