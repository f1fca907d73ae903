/**
 * The OpenAI API surface beyond chat and completions, driven by the official `openai` client: nothing
 * silently ignored (an unknown or unsupported parameter is a 400 naming it), the sampling parameters
 * changing what the random model writes (logit_bias, the penalties) on a node-llama-cpp engine and on a
 * llama-server child alike, the model's names and aliases, `GET /v1/models/{id}`, the empty list when
 * idle, `user` as the conversation a slot serves, llama-server's /tokenize and /detokenize, and
 * /v1/embeddings (equal sizes, identical inputs identical vectors, base64 the same floats; on llama-server
 * children from an embedding engine, to the openai client and LangChain's OpenAIEmbeddings); and the
 * Vercel AI SDK's OpenAI-compatible provider, a second client, sending its standard settings.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embedMany, generateText, streamText } from 'ai';
import { OpenAIEmbeddings } from '@langchain/openai';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { startServed } from '../helpers/served.js';

type Served = Awaited<ReturnType<typeof startServed>>;

const clientOf = (served: Served): OpenAI => new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });

/** A greedy completion of `prompt` past end-of-generation, with its token ids (Manifold's `return_tokens`). */
async function completionTokens(client: OpenAI, model: string, extra: Record<string, unknown>, maxTokens = 24): Promise<number[]> {
  const answer = await client.completions.create({
    model,
    prompt: 'the model',
    max_tokens: maxTokens,
    temperature: 0,
    ignore_eos: true,
    return_tokens: true,
    ...extra,
  } as OpenAI.CompletionCreateParamsNonStreaming);
  return (answer as unknown as { manifold: { tokens: number[] } }).manifold.tokens;
}

const mostRepeated = (tokens: readonly number[]): number => Math.max(...[...new Set(tokens)].map((t) => tokens.filter((u) => u === t).length));

async function post(served: Served, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${served.front.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** logit_bias and the penalties change the greedy output as they should, on whatever engine serves `client`. */
async function checkSamplingParity(client: OpenAI, model: string): Promise<void> {
  const plain = await completionTokens(client, model, {});
  expect(plain).toHaveLength(24);
  // The random model repeats itself under greedy decoding: that is what the penalties have to change.
  expect(mostRepeated(plain)).toBeGreaterThan(2);

  // +100 on a token the greedy answer never chose makes it the whole answer; -100 bans the first choice.
  const forced = [...Array(600).keys()].find((t) => t > 300 && !plain.includes(t))!;
  expect(await completionTokens(client, model, { logit_bias: { [forced]: 100 } }, 6)).toEqual(Array(6).fill(forced));
  const banned = await completionTokens(client, model, { logit_bias: { [plain[0]!]: -100 } }, 6);
  expect(banned).not.toContain(plain[0]);

  const frequency = await completionTokens(client, model, { frequency_penalty: 2 });
  expect(mostRepeated(frequency)).toBeLessThan(mostRepeated(plain));
  const presence = await completionTokens(client, model, { presence_penalty: 2 });
  expect(presence).not.toEqual(plain);
  expect(new Set(presence).size).toBeGreaterThan(new Set(plain).size);
}

describe('the OpenAI surface on node-llama-cpp engines', () => {
  let served: Served;
  let client: OpenAI;
  let model: string;

  beforeAll(async () => {
    served = await startServed({ alias: ['my-model', 'gpt-4o-mini'] });
    client = clientOf(served);
    model = served.workstation.modelId;
  });

  it('refuses every parameter it does not honour with a 400 naming it, and takes the documented ignored ones', async () => {
    const refused = async (params: Record<string, unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> => {
      const error = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, ...params } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((e: unknown) => e);
      expect(error, JSON.stringify(params)).toBeInstanceOf(OpenAI.BadRequestError);
      return error as InstanceType<typeof OpenAI.BadRequestError>;
    };
    for (const [field, value] of Object.entries({
      response_format: { type: 'xml' },
      tool_choice: 'required',
      top_logprobs: 3,
      reasoning_format: 'verbose',
      modalities: ['text', 'audio'],
      frobnicate: 1,
    })) {
      const error = await refused({ [field]: value });
      expect(error.param?.split('.')[0], field).toBe(field);
      expect(error.message).toContain(field);
    }
    expect((await refused({ n: 2 })).message).toContain('one choice per request');
    const completionError = await client.completions.create({ model, prompt: 'a', max_tokens: 1, echo: true }).catch((e: unknown) => e);
    expect(completionError).toMatchObject({ status: 400, param: 'echo' });

    const accepted = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'hi', name: 'bob' }],
      max_tokens: 2,
      store: false,
      metadata: { app: 'test' },
      service_tier: 'auto',
      user: 'someone',
    });
    expect(accepted.choices[0]!.message.content).toBeTypeOf('string');
  });

  it('changes the output with logit_bias and the penalties', async () => {
    await checkSamplingParity(client, model);
  });

  it('answers to the served id, the file name, "default" and the aliases; 404s anything else naming them', async () => {
    for (const name of [model, `${model}.gguf`, 'default', 'my-model', 'gpt-4o-mini']) {
      const answer = await client.chat.completions.create({ model: name, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });
      expect(answer.model, name).toBe(model);
      expect((await client.models.retrieve(name)).id).toBe(model);
    }
    const error = await client.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as Error).message).toContain(`serves "${model}"`);
    expect((error as Error).message).toContain('"my-model"');
    await expect(client.models.retrieve('gpt-5')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const listed = await client.models.list();
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ id: model, object: 'model', aliases: [`${model}.gguf`, 'default', 'my-model', 'gpt-4o-mini'] });
  });

  it('marks the slot that served a request with its user as the conversation', async () => {
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'remember me' }], max_tokens: 2, user: 'alice-surface' });
    const slots = (await (await fetch(`${served.front.url}/slots`)).json()) as { conversationId: string | null }[];
    expect(slots.filter((s) => s.conversationId === 'alice-surface')).toHaveLength(1);
  });

  it('tokenizes and detokenizes as llama-server does', async () => {
    const plain = await post(served, '/tokenize', { content: 'hello world' });
    expect(plain.status).toBe(200);
    const tokens = plain.json.tokens as number[];
    expect(tokens.length).toBeGreaterThan(0);
    const withBos = (await post(served, '/tokenize', { content: 'hello world', add_special: true })).json.tokens as number[];
    expect(withBos).toEqual([1, ...tokens]);
    const special = (await post(served, '/tokenize', { content: '<|im_start|>' })).json.tokens as number[];
    expect(special).toHaveLength(1);
    const pieces = (await post(served, '/tokenize', { content: 'hello world', with_pieces: true })).json.tokens as { id: number; piece: string }[];
    expect(pieces.map((p) => p.id)).toEqual(tokens);
    const detokenized = await post(served, '/detokenize', { tokens });
    expect(detokenized.status).toBe(200);
    expect((detokenized.json.content as string).trim()).toBe('hello world');
    expect(
      pieces
        .map((p) => p.piece)
        .join('')
        .trim(),
    ).toBe('hello world');
    expect(await post(served, '/detokenize', { tokens: [10_000_000] })).toMatchObject({ status: 400, json: { error: { param: 'tokens[0]' } } });
    expect(await post(served, '/tokenize', { content: 'x', text: 'x' })).toMatchObject({ status: 400, json: { error: { param: 'text' } } });
    expect(await post(served, '/tokenize', {})).toMatchObject({ status: 400, json: { error: { param: 'content' } } });
  });

  it('embeds strings and token ids: equal sizes, identical inputs identical vectors, base64 the same floats', async () => {
    const input = ['hello world', 'the model writes', 'hello world'];
    const floats = await client.embeddings.create({ model, input, encoding_format: 'float' });
    expect(floats.data.map((d) => d.index)).toEqual([0, 1, 2]);
    const vectors = floats.data.map((d) => d.embedding);
    expect(vectors[0]!.length).toBeGreaterThan(0);
    expect(new Set(vectors.map((v) => v.length)).size).toBe(1);
    expect(vectors[2]).toEqual(vectors[0]);
    expect(vectors[1]).not.toEqual(vectors[0]);
    expect(floats.usage.prompt_tokens).toBeGreaterThan(0);

    // The client asks for base64 by default and decodes it.
    const decoded = await client.embeddings.create({ model, input });
    expect(decoded.data.map((d) => d.embedding)).toEqual(vectors);
    const raw = await post(served, '/v1/embeddings', { model, input: input[0], encoding_format: 'base64' });
    const bytes = Buffer.from((raw.json.data as { embedding: string }[])[0]!.embedding, 'base64');
    expect([...new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)]).toEqual(vectors[0]);

    const tokens = (await post(served, '/tokenize', { content: 'hello world', add_special: true })).json.tokens as number[];
    const byTokens = await client.embeddings.create({ model, input: [tokens], encoding_format: 'float' });
    expect(byTokens.data[0]!.embedding).toEqual(vectors[0]);

    const error = await client.embeddings.create({ model, input: 'x', dimensions: 8 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, param: 'dimensions' });
    expect(await post(served, '/v1/embeddings', { input: [[10_000_000]] })).toMatchObject({ status: 400, json: { error: { param: 'input' } } });
  });
});

describe('the Vercel AI SDK’s OpenAI-compatible provider', () => {
  it('generates text with its standard settings and embeds, against the strict schemas', async () => {
    const served = await startServed({ replicas: 1 });
    const provider = createOpenAICompatible({ name: 'manifold', baseURL: `${served.front.url}/v1`, includeUsage: true });
    const model = served.workstation.modelId;
    const text = await generateText({
      model: provider.chatModel(model),
      prompt: 'hello',
      maxOutputTokens: 4,
      temperature: 0,
      topP: 0.9,
      seed: 3,
      frequencyPenalty: 0.5,
      presencePenalty: 0.5,
      stopSequences: ['\n\n'],
      providerOptions: { manifold: { user: 'sdk-user' } },
      maxRetries: 0,
    });
    expect(text.usage.outputTokens).toBeGreaterThan(0);
    // Sampled at the SDK's default temperature, a random-weight model may end at once: ignore_eos (through the
    // provider's options) makes the stream's length certain (an end of generation first failed a CI rehearsal).
    const streamed = streamText({
      model: provider.completionModel(model),
      prompt: 'the model',
      maxOutputTokens: 3,
      maxRetries: 0,
      providerOptions: { manifold: { ignore_eos: true } },
    });
    expect((await streamed.usage).outputTokens).toBe(3);
    const { embeddings } = await embedMany({ model: provider.embeddingModel(model), values: ['a b', 'c d'], maxRetries: 0 });
    expect(embeddings).toHaveLength(2);
    expect(embeddings[0]!.length).toBe(embeddings[1]!.length);
  });
});

describe('the OpenAI surface on a llama-server child', () => {
  it('passes logit_bias and the penalties through, and serves embeddings from an embedding engine to the openai client and LangChain', async () => {
    const served = await startServed({ replicas: 2, engine: { kind: 'llama-server', contextSize: 1024, slots: 2, threads: 1 } });
    const client = clientOf(served);
    const model = served.workstation.modelId;
    await checkSamplingParity(client, model);
    const width = 128; // the tiny test model's embedding width
    const [openai, answer] = await Promise.all([
      client.embeddings.create({ model, input: ['hello there', 'the model'], encoding_format: 'float' }),
      client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }),
    ]);
    expect(openai.data.map((d) => d.embedding.length)).toEqual([width, width]);
    expect(openai.data[0]!.embedding).not.toEqual(openai.data[1]!.embedding);
    expect(answer.choices[0]!.message.content).toBeTypeOf('string');
    const langchain = new OpenAIEmbeddings({ model, apiKey: 'unused', configuration: { baseURL: `${served.front.url}/v1` }, maxRetries: 0 });
    const [query, documents] = await Promise.all([langchain.embedQuery('hello there'), langchain.embedDocuments(['hello there', 'a second document'])]);
    expect(query).toHaveLength(width);
    // The same text gives the same vector, through either client.
    expect(documents[0]!.map((v) => v.toFixed(5))).toEqual(query.map((v) => v.toFixed(5)));
    expect(openai.data[0]!.embedding.map((v) => v.toFixed(5))).toEqual(query.map((v) => v.toFixed(5)));
    expect(served.logs.some((line) => line.includes('[embeddings') && line.includes('serving embeddings'))).toBe(true);
  });
});

describe('an idle server', () => {
  it('lists no model and finds none', async () => {
    const served = await startServed(undefined, { idle: true });
    const client = clientOf(served);
    expect((await client.models.list()).data).toEqual([]);
    await expect(client.models.retrieve('default')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
