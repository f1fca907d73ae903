/**
 * The reply to a message a child could not parse (the engine's and the tokenizer's): `unknown_type` for a
 * type the protocol does not have, else `bad_message` naming each field that failed, with the message's id
 * when it had a usable one.
 */
export interface BadMessageReply {
  id: number | null;
  code: 'unknown_type' | 'bad_message';
  message: string;
}

export function describeBadMessage(raw: unknown, issues: readonly { path: PropertyKey[]; message: string }[], knownTypes: readonly string[]): BadMessageReply {
  const record = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const id = Number.isInteger(record.id) && (record.id as number) >= 0 ? (record.id as number) : null;
  if (typeof record.type === 'string' && !knownTypes.includes(record.type)) {
    return { id, code: 'unknown_type', message: `unknown message type "${record.type}" (known: ${knownTypes.join(', ')})` };
  }
  const detail = issues.map((i) => `${i.path.map(String).join('.') || '(message)'}: ${i.message}`).join('; ');
  return { id, code: 'bad_message', message: `bad message: ${detail}` };
}
