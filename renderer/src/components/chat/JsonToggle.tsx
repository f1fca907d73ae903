/**
 * The composer's "JSON" toggle: when on, the answer is held to JSON by a grammar — any JSON object, or a
 * value of the JSON schema typed in its box. `parseJsonChoice` reads the box: empty is any object, text
 * that is not a JSON object is an error to show (nothing is sent).
 */
export interface JsonChoice {
  on: boolean;
  schemaText: string;
}

/** What to send for the toggle: undefined when off; `{schema}` when on; an error when the box does not hold a JSON object. */
export function parseJsonChoice(choice: JsonChoice): { json?: { schema: Record<string, unknown> | null }; error?: string } {
  if (!choice.on) return {};
  if (!choice.schemaText.trim()) return { json: { schema: null } };
  try {
    const schema: unknown = JSON.parse(choice.schemaText);
    if (typeof schema === 'object' && schema !== null && !Array.isArray(schema)) return { json: { schema: schema as Record<string, unknown> } };
    return { error: 'the JSON schema must be a JSON object' };
  } catch (error) {
    return { error: `the JSON schema is not JSON: ${(error as Error).message}` };
  }
}

export function JsonToggle({ choice, onChange, error }: { choice: JsonChoice; onChange: (choice: JsonChoice) => void; error: string | null }) {
  return (
    <div className="json-toggle">
      <label className="check">
        <input type="checkbox" checked={choice.on} onChange={(e) => onChange({ ...choice, on: e.target.checked })} /> JSON
      </label>
      {choice.on && (
        <textarea
          aria-label="JSON schema"
          placeholder='JSON schema of the answer (empty: any JSON object), e.g. {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}}}'
          value={choice.schemaText}
          onChange={(e) => onChange({ ...choice, schemaText: e.target.value })}
        />
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
