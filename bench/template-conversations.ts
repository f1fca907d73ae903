/**
 * The conversations a chat template is checked on, as OpenAI chat request bodies: a system prompt and a
 * question, two turns, a tool round trip (an assistant call, its result, an answer, a new question), thinking
 * turned off by `chat_template_kwargs`, a high `reasoning_effort`, and an earlier answer's reasoning handed back. The template oracle
 * test renders each through Manifold and through llama-server's `POST /apply-template`.
 */

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

export const TEMPLATE_CONVERSATIONS = {
  plain: {
    messages: [
      { role: 'system', content: 'You are brief.' },
      { role: 'user', content: 'Hello there' },
    ],
  },
  turns: {
    messages: [
      { role: 'system', content: 'You are brief.' },
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: 'Hi! How can I help?' },
      { role: 'user', content: 'Tell me a joke' },
    ],
  },
  tools: {
    tools: [weatherTool],
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '21 C' },
      { role: 'assistant', content: 'It is 21 C.' },
      { role: 'user', content: 'And Rome?' },
    ],
  },
  thinkingOff: {
    chat_template_kwargs: { enable_thinking: false },
    messages: [
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: 'Hi!' },
      { role: 'user', content: 'Joke?' },
    ],
  },
  effort: { reasoning_effort: 'high', messages: [{ role: 'user', content: 'Think hard: why is the sky blue?' }] },
  reasoningBack: {
    messages: [
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: 'Hi!', reasoning_content: 'The user greets me.' },
      { role: 'user', content: 'Joke?' },
    ],
  },
} as const;

export type TemplateConversation = keyof typeof TEMPLATE_CONVERSATIONS;
