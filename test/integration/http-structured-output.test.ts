/**
 * Structured output through the OpenAI front on every engine kind, on the random test model, with the
 * official `openai` client and a second client library (the Vercel AI SDK's OpenAI-compatible provider):
 * `chat.completions.parse` with a zod schema returns an object that validates, streaming too;
 * `json_object` parses; a completion takes `response_format`; a schema keyword the grammar cannot express
 * is a 400 naming it; a second structured turn reuses its cached prefix.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject } from 'ai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startServed } from '../helpers/served.js';
import { engineKinds } from '../helpers/engines.js';

/** Strings and arrays bounded: the random model closes a string only when it happens to sample a quote. */
const Weather = z.object({
  city: z.string().max(10),
  temperature: z.number(),
  rainy: z.boolean(),
  sky: z.enum(['sun', 'rain', 'snow']),
  days: z.array(z.number().int()).max(3),
  note: z.string().max(6).nullable(),
});
const SEEDS = [1, 2, 3];
const MAX_TOKENS = 400;

describe.each(engineKinds('structured output'))('structured output on a $kind engine', ({ kind, present }) => {
  let served: Awaited<ReturnType<typeof startServed>>;
  let client: OpenAI;
  beforeAll(async () => {
    if (!present) return;
    served = await startServed({ replicas: 1, engine: { kind, contextSize: 2048, slots: 2, threads: 1 } });
    client = new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => served?.close());

  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: `Answer in JSON. ${'Report the weather as the schema says. '.repeat(12)}` },
    { role: 'user', content: 'The weather in Paris?' },
  ];

  it.skipIf(!present)('parses chat answers against a zod schema, whole and streamed', async () => {
    for (const seed of SEEDS) {
      const completion = await client.chat.completions.parse({
        model: 'default',
        messages,
        response_format: zodResponseFormat(Weather, 'weather'),
        max_tokens: MAX_TOKENS,
        seed,
      });
      const choice = completion.choices[0]!;
      expect(choice.finish_reason, `seed ${seed}: ${choice.message.content}`).toBe('stop');
      expect(Weather.parse(choice.message.parsed)).toEqual(JSON.parse(choice.message.content!));
    }
    const stream = client.chat.completions.stream({
      model: 'default',
      messages,
      response_format: zodResponseFormat(Weather, 'weather'),
      max_tokens: MAX_TOKENS,
      seed: 4,
    });
    let deltas = 0;
    stream.on('content', () => deltas++);
    const final = await stream.finalChatCompletion();
    // Streamed, not sent whole: its first token comes alone, its later ones a few to an event (a frame apart).
    expect(deltas).toBeGreaterThan(1);
    expect(Weather.safeParse(final.choices[0]!.message.parsed).success).toBe(true);
  });

  it.skipIf(!present)('answers json_object with a JSON object, and a completion with response_format', async () => {
    // Any object's keys and strings are unbounded: a bias towards the quote token makes the random model close them soon.
    const pieces = (await (
      await fetch(`${served.front.url}/tokenize`, { method: 'POST', body: JSON.stringify({ content: '"', with_pieces: true }) })
    ).json()) as { tokens: { id: number; piece: string }[] };
    const quote = pieces.tokens.find((t) => t.piece === '"')!.id;
    for (const seed of SEEDS) {
      const completion = await client.chat.completions.create({
        model: 'default',
        messages,
        response_format: { type: 'json_object' },
        max_tokens: MAX_TOKENS,
        seed,
        logit_bias: { [quote]: 10 },
      });
      const content = completion.choices[0]!.message.content!;
      expect(completion.choices[0]!.finish_reason, content).toBe('stop');
      const value: unknown = JSON.parse(content);
      expect(typeof value === 'object' && value !== null && !Array.isArray(value), content).toBe(true);
    }
    const format = {
      type: 'json_schema',
      json_schema: {
        name: 'pair',
        strict: true,
        schema: { type: 'object', properties: { a: { type: 'boolean' }, b: { enum: ['x', 'y'] } }, required: ['a', 'b'], additionalProperties: false },
      },
    };
    const completion = await client.completions.create({
      model: 'default',
      prompt: 'A pair:',
      max_tokens: 64,
      seed: 1,
      response_format: format,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    expect(JSON.parse(completion.choices[0]!.text)).toMatchObject({ a: expect.any(Boolean), b: expect.stringMatching(/^[xy]$/) });
  });

  it.skipIf(!present)(
    'refuses a schema keyword the grammar cannot express naming it, ignore_eos with a grammar, and grammar beside response_format',
    async () => {
      const airport = z.object({ code: z.string().regex(/^[A-Z]{3}$/) });
      const refused = await client.chat.completions
        .parse({ model: 'default', messages, response_format: zodResponseFormat(airport, 'airport'), max_tokens: 8 })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused).toMatchObject({
        param: 'response_format',
        code: 'unsupported_schema_keyword',
        message: expect.stringContaining('"pattern" at #/properties/code is not supported'),
      });
      const endless = await client.chat.completions
        .create({
          model: 'default',
          messages,
          response_format: { type: 'json_object' },
          max_tokens: 8,
          ignore_eos: true,
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((error: unknown) => error);
      expect(endless).toMatchObject({ status: 400, param: 'ignore_eos' });
      const both = await client.chat.completions
        .create({
          model: 'default',
          messages,
          response_format: { type: 'json_object' },
          max_tokens: 8,
          grammar: 'root ::= "a"',
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((error: unknown) => error);
      expect(both).toMatchObject({ status: 400, param: 'grammar' });
    },
  );

  it.skipIf(!present)('reuses the cached prefix on a second structured turn', async () => {
    const format = zodResponseFormat(Weather, 'weather');
    const first = await client.chat.completions.create({
      model: 'default',
      messages,
      response_format: format,
      max_tokens: MAX_TOKENS,
      seed: 7,
      user: `${kind}-turns`,
    });
    const history = [
      ...messages,
      { role: 'assistant' as const, content: first.choices[0]!.message.content },
      { role: 'user' as const, content: 'And in Rome?' },
    ];
    const second = await client.chat.completions.create({
      model: 'default',
      messages: history,
      response_format: format,
      max_tokens: MAX_TOKENS,
      seed: 7,
      user: `${kind}-turns`,
    });
    expect(Weather.safeParse(JSON.parse(second.choices[0]!.message.content!)).success).toBe(true);
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(first.usage!.prompt_tokens_details!.cached_tokens ?? 0);
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(first.usage!.prompt_tokens * 0.9);
  });

  it.skipIf(!present)('gives chat logprobs consistent with the chosen tokens, whole and streamed', async () => {
    const hot = { temperature: 1, top_k: 0, top_p: 1, min_p: 0, seed: 11 } as const;
    const ask = { model: 'default', messages, max_tokens: 12, ignore_eos: true, logprobs: true, top_logprobs: 5, ...hot };
    const whole = await client.chat.completions.create(ask as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const content = whole.choices[0]!.logprobs!.content!;
    expect(content).toHaveLength(whole.usage!.completion_tokens);
    expect(content.map((c) => c.token).join('')).toBe(whole.choices[0]!.message.content);
    for (const entry of content) {
      expect(entry.bytes).toEqual([...Buffer.from(entry.token, 'utf8')]);
      expect(entry.top_logprobs).toHaveLength(5);
      const logprobs = entry.top_logprobs.map((t) => t.logprob);
      expect(logprobs).toEqual([...logprobs].sort((a, b) => b - a));
      expect(entry.logprob).toBeLessThanOrEqual(logprobs[0]! + 1e-6);
      const listed = entry.top_logprobs.find((t) => t.token === entry.token);
      if (listed) expect(listed.logprob).toBeCloseTo(entry.logprob, 5);
    }
    // Greedy: every chosen token is its step's likeliest.
    const greedy = await client.chat.completions.create({ ...ask, temperature: 0 } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    for (const entry of greedy.choices[0]!.logprobs!.content!)
      expect(entry.top_logprobs[0]).toMatchObject({ token: entry.token, logprob: expect.closeTo(entry.logprob, 5) });

    const stream = await client.chat.completions.create({ ...ask, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    let text = '';
    const streamed: OpenAI.Chat.ChatCompletionTokenLogprob[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    }
    expect(streamed.map((c) => c.token).join('')).toBe(text);
    expect(streamed).toEqual(content);
  });

  it.skipIf(!present)('gives completion logprobs in the legacy shape', async () => {
    const completion = await client.completions.create({
      model: 'default',
      prompt: 'Once upon a time',
      max_tokens: 10,
      ignore_eos: true,
      logprobs: 3,
      temperature: 1,
      top_k: 0,
      top_p: 1,
      min_p: 0,
      seed: 2,
    } as OpenAI.CompletionCreateParamsNonStreaming);
    const { text, logprobs } = completion.choices[0]!;
    expect(logprobs!.tokens).toHaveLength(10);
    expect(logprobs!.tokens!.join('')).toBe(text);
    expect(logprobs!.token_logprobs!.every((l) => l <= 0)).toBe(true);
    expect(logprobs!.text_offset).toEqual(logprobs!.tokens!.map((_, i) => logprobs!.tokens!.slice(0, i).join('').length));
    for (const top of logprobs!.top_logprobs!) expect(Object.keys(top).length).toBeGreaterThan(0);
    const refused = await client.chat.completions.create({ model: 'default', messages, max_tokens: 1, top_logprobs: 2 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400, param: 'top_logprobs' });
  });

  it.skipIf(!present)("gives the Vercel AI SDK's generateObject an object of its zod schema", async () => {
    const provider = createOpenAICompatible({ name: 'manifold', baseURL: `${served.front.url}/v1`, supportsStructuredOutputs: true });
    const { object, finishReason } = await generateObject({
      model: provider.chatModel('default'),
      schema: Weather,
      schemaName: 'weather',
      prompt: 'The weather in Oslo?',
      maxOutputTokens: MAX_TOKENS,
      seed: 3,
      maxRetries: 0,
    });
    expect(finishReason).toBe('stop');
    expect(Weather.parse(object)).toEqual(object);
  });
});
