/** Pure logic: what the chat window's thinking setting asks of the template, in the API's terms. */
import { describe, expect, it } from 'vitest';
import { chatSamplingSchema } from '../../common/contract.js';
import { thinkingOptions } from '../../electron/core/chat/chat-service.js';

describe('the chat window thinking setting', () => {
  it("leaves the template's default alone, turns thinking off as reasoning_effort none does, and passes an effort on", () => {
    expect(thinkingOptions('default')).toEqual({});
    expect(thinkingOptions('off')).toEqual({ enableThinking: false, reasoningEffort: 'none' });
    expect(thinkingOptions('high')).toEqual({ reasoningEffort: 'high' });
  });

  it('defaults a conversation stored before the setting existed to the model default with no budget', () => {
    const stored = chatSamplingSchema.parse({ temperature: 0.7, topP: 0.9, topK: 20, maxTokens: 64, seed: null });
    expect(stored).toMatchObject({ thinking: 'default', thinkingBudget: null });
    expect(() => chatSamplingSchema.parse({ thinkingBudget: -1 })).toThrow();
  });
});
