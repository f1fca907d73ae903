/** Pure logic: the chat window's settings (thinking, in the API's terms; temperature in OpenAI's range) and the timings shown under an answer. */
import { describe, expect, it } from 'vitest';
import { chatSamplingSchema } from '../../common/conversation.js';
import { answerTimings, thinkingOptions } from '../../core/chat/chat-service.js';

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

describe('the chat window sampling and timings', () => {
  it("reads a temperature saved above OpenAI's 2 as 2", () => {
    expect(chatSamplingSchema.parse({ temperature: 5 }).temperature).toBe(2);
    expect(chatSamplingSchema.parse({ temperature: 1.3 }).temperature).toBe(1.3);
    expect(() => chatSamplingSchema.parse({ temperature: -1 })).toThrow();
  });

  it('gives the time to the first token and the pace after it', () => {
    expect(answerTimings(1000, 1400, 3400, 41)).toEqual({ firstTokenMs: 400, tokensPerSecond: 20 });
    expect(answerTimings(1000, 1400, 1400, 1)).toEqual({ firstTokenMs: 400 });
    expect(answerTimings(1000, undefined, 1400, 0)).toEqual({});
  });
});
