/**
 * Grammar-constrained generation on every engine kind, on the random test model: a GBNF grammar holds
 * sampled output to its language on a node-llama-cpp engine and on a llama-server engine (llama-server's
 * `grammar` extension through the OpenAI front), a grammar that does not parse is a clear error and the
 * engine serves on, a second grammar turn still reuses its cached prefix, and a remote peer that speaks
 * only the OpenAI dialect is never sent a grammar (503 when it is the only replica).
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { EngineRequestError } from '../../core/engine/engine-client.js';
import { engineKinds, promptTokens, startEngine } from '../helpers/engines.js';
import { startServed } from '../helpers/served.js';

/** Characters outside the test vocabulary's single-character tokens (`<`, `>`) come only from byte tokens. */
const GRAMMAR = 'root ::= "<" [a-z]{1,6} ":" [0-9]{1,3} ">"';
const SENTENCE = /^<[a-z]{1,6}:[0-9]{1,3}>$/;
const SEEDS = [1, 2, 3, 4];
const hot = (seed: number) => ({ temperature: 1, top_k: 0, top_p: 1, min_p: 0, seed });

type Served = Awaited<ReturnType<typeof startServed>>;

const clientOf = (served: Served): OpenAI => new OpenAI({ baseURL: `${served.front.url}/v1`, apiKey: 'unused', maxRetries: 0 });

/** A completion with llama-server's `grammar` extension; its text and the replica that served it. */
async function complete(client: OpenAI, grammar: string, seed: number): Promise<{ text: string; finish: string; replica: number }> {
  const response = await client.completions.create({
    model: 'default',
    prompt: 'Name a thing and a number:',
    max_tokens: 32,
    ...hot(seed),
    grammar,
  } as OpenAI.CompletionCreateParamsNonStreaming);
  const served = (response as unknown as { manifold: { replica: number } }).manifold;
  return { text: response.choices[0]!.text, finish: response.choices[0]!.finish_reason, replica: served.replica };
}

describe('a grammar on the node-llama-cpp engine', () => {
  it('holds sampled output to the grammar, refuses one that does not parse with bad_grammar, and serves on', async () => {
    const engine = await startEngine({ slots: 1 });
    const sampling = { temperature: 1, topK: 0, topP: 1, minP: 0 };
    for (const seed of SEEDS) {
      const done = await engine.generate({ tokens: promptTokens(20), maxTokens: 32, sampling: { ...sampling, seed }, grammar: GRAMMAR }).done;
      expect(done.text, `seed ${seed}`).toMatch(SENTENCE);
      expect(done.finishReason).toBe('stop');
    }
    const refused = await engine.generate({ tokens: promptTokens(20), maxTokens: 8, grammar: 'root ::= undefined-rule' }).done.catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EngineRequestError);
    expect(refused).toMatchObject({ code: 'bad_grammar', message: expect.stringContaining('does not parse') });
    const after = await engine.generate({ tokens: promptTokens(20), maxTokens: 4, sampling: { temperature: 0 }, ignoreEos: true }).done;
    expect(after.completionTokens).toHaveLength(4);
  });
});

describe.each(engineKinds('a grammar through the front'))('a grammar through the front on a $kind engine', ({ kind, present }) => {
  it.skipIf(!present)('constrains completions and chat, keeps a grammar turn on its cached prefix, and names a grammar that does not parse', async () => {
    const served = await startServed({ replicas: 1, engine: { kind, contextSize: 1024, slots: 2, threads: 1 } });
    const client = clientOf(served);
    for (const seed of SEEDS) {
      const { text, finish } = await complete(client, GRAMMAR, seed);
      expect(text, `seed ${seed}`).toMatch(SENTENCE);
      expect(finish).toBe('stop');
    }

    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: 'Answer with a tag. '.repeat(20) },
      { role: 'user', content: 'A tag for the weather?' },
    ];
    const chat = (history: OpenAI.Chat.ChatCompletionMessageParam[]) =>
      client.chat.completions.create({
        model: 'default',
        messages: history,
        max_tokens: 32,
        ...hot(5),
        grammar: GRAMMAR,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const first = await chat(messages);
    expect(first.choices[0]!.message.content).toMatch(SENTENCE);
    const second = await chat([...messages, { role: 'assistant', content: first.choices[0]!.message.content }, { role: 'user', content: 'And tomorrow?' }]);
    expect(second.choices[0]!.message.content).toMatch(SENTENCE);
    expect(second.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(first.usage!.prompt_tokens);

    const refused = await complete(client, 'root ::= undefined-rule', 1).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused).toMatchObject({ param: 'grammar', message: expect.stringMatching(/grammar/i) });
    expect((await complete(client, GRAMMAR, 9)).text).toMatch(SENTENCE);
  });
});

describe('a remote peer that speaks only the OpenAI dialect', () => {
  it('is never sent a grammar: grammar requests go to the replica that takes one, or are a 503 saying why', async () => {
    const peer = await startServed({ replicas: 1, engine: { contextSize: 1024, slots: 2, threads: 1 } });
    const remote = { url: peer.front.url, kind: 'openai' as const, slots: 2 };
    const mixed = await startServed({ replicas: [{ gpus: [] }, remote], engine: { contextSize: 1024, slots: 1, threads: 1 } });
    const mixedClient = clientOf(mixed);
    // Four at once on one local slot: they wait for it rather than go to the idle OpenAI peer.
    const answers = await Promise.all(SEEDS.map((seed) => complete(mixedClient, GRAMMAR, seed)));
    for (const answer of answers) {
      expect(answer.replica).toBe(0);
      expect(answer.text).toMatch(SENTENCE);
    }
    // Without a grammar the peer serves like any replica.
    const plain = await Promise.all(
      SEEDS.map(() =>
        mixedClient.completions.create({
          model: 'default',
          prompt: promptTokens(8),
          max_tokens: 2,
          ignore_eos: true,
        } as OpenAI.CompletionCreateParamsNonStreaming),
      ),
    );
    expect(new Set(plain.map((r) => (r as unknown as { manifold: { replica: number } }).manifold.replica))).toEqual(new Set([0, 1]));

    const onlyPeer = await startServed({ replicas: [remote] });
    const refused = await complete(clientOf(onlyPeer), GRAMMAR, 1).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused).toMatchObject({ status: 503, message: expect.stringContaining('OpenAI dialect') });
  });
});
