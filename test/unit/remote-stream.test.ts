/**
 * A remote replica's stream, pure: the SSE parser over bytes split anywhere, each kind's reading of its
 * chunks (recorded from this llama-server build and from a Manifold node on the tiny model; the vLLM-style
 * chunks are shaped as vLLM documents them), the GenerateDone tallied from them, how a peer's error
 * answers are classed, and the model check.
 */
import { describe, expect, it } from 'vitest';
import { generateRequestSchema, type GenerateDone } from '../../common/engine-protocol.js';
import { EngineExitedError, EngineRequestError } from '../../core/engine/engine-client.js';
import type { CompletionDialect } from '../../core/remote/completion-dialect.js';
import { GenerationTally } from '../../core/remote/generation-tally.js';
import { llamaServerDialect } from '../../core/remote/llama-server-dialect.js';
import { matchPeerModel } from '../../core/remote/model-match.js';
import { manifoldDialect, openAiDialect } from '../../core/remote/openai-dialect.js';
import { peerRefusal, RemoteLostError } from '../../core/remote/remote-errors.js';
import { SseParser } from '../../core/remote/sse-parser.js';

const URL = 'http://peer.test:8080';

/** Splits `text` into pieces of `size` bytes (cutting UTF-8 characters and CRLFs apart) and parses them. */
function parseInPieces(text: string, size: number): { event: string; data: string }[] {
  const bytes = new TextEncoder().encode(text);
  const parser = new SseParser();
  const events: { event: string; data: string }[] = [];
  for (let at = 0; at < bytes.length; at += size) events.push(...parser.push(bytes.subarray(at, at + size)));
  return events;
}

/** The GenerateDone a dialect's reading of these chunks adds up to (each chunk 1 ms after the last). */
function tally(dialect: CompletionDialect, chunks: unknown[], promptTokens: number[]): { done: GenerateDone; handedOn: { tokens: number[]; text: string }[] } {
  const request = generateRequestSchema.parse({ tokens: promptTokens });
  const t = new GenerationTally(request, 0);
  const handedOn: { tokens: number[]; text: string }[] = [];
  chunks.forEach((chunk, i) => {
    const read = dialect.read(chunk);
    if (!read.ok) throw new Error(read.problem);
    const handed = t.add(read.value, 10 + i);
    if (handed) handedOn.push(handed);
  });
  return { done: t.done(false, 10 + chunks.length), handedOn };
}

describe('the SSE parser', () => {
  const stream = 'data: {"content":"é"}\r\n\r\n: ping\r\n\r\nevent: error\ndata: line one\ndata: line two\n\ndata:[DONE]\r\rdata: cut';

  it('reads the same events whatever the pieces, across UTF-8 characters and CRLF pairs', () => {
    const expected = [
      { event: 'message', data: '{"content":"é"}' },
      { event: 'error', data: 'line one\nline two' },
      { event: 'message', data: '[DONE]' },
    ];
    for (const size of [1, 2, 3, 7, 1000]) expect(parseInPieces(stream, size)).toEqual(expected);
  });

  it('keeps an event that is not finished by its blank line until it is', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ event: 'message', data: 'a' }]);
  });
});

// Recorded from llama-server (this build) on the tiny model: prompt [1, 300, 307, …, 349], n_predict 3,
// the second time with the prompt cached (generation_settings, 200 lines of echoed settings, left out).
const llamaTokenChunks = [
  { index: 0, content: ' they', tokens: [408], stop: false, id_slot: -1, tokens_predicted: 1, tokens_evaluated: 9 },
  { index: 0, content: ' pref', tokens: [572], stop: false, id_slot: -1, tokens_predicted: 2, tokens_evaluated: 9 },
  { index: 0, content: ' some', tokens: [470], stop: false, id_slot: -1, tokens_predicted: 3, tokens_evaluated: 9 },
];
const llamaFinal = {
  index: 0,
  content: '',
  tokens: [],
  id_slot: 0,
  stop: true,
  model: '/models/manifold-test-tiny-82fda828b820.gguf',
  tokens_predicted: 3,
  tokens_evaluated: 9,
  prompt: '<s>MT07!_ a w',
  has_new_line: false,
  truncated: false,
  stop_type: 'limit',
  stopping_word: '',
  tokens_cached: 11,
  timings: {
    cache_n: 8,
    prompt_n: 1,
    prompt_ms: 0.565,
    prompt_per_token_ms: 0.565,
    prompt_per_second: 1769.9,
    predicted_n: 3,
    predicted_ms: 0.4,
    predicted_per_token_ms: 0.2,
    predicted_per_second: 5000.0,
  },
};
const prompt9 = [1, 300, 307, 314, 321, 328, 335, 342, 349];

describe("llama-server's /completion stream", () => {
  it('hands on each token with its id and ends with the slot, the cache hit and its own timings', () => {
    const { done, handedOn } = tally(llamaServerDialect, [...llamaTokenChunks, llamaFinal], prompt9);
    expect(handedOn).toEqual([
      { tokens: [408], text: ' they' },
      { tokens: [572], text: ' pref' },
      { tokens: [470], text: ' some' },
    ]);
    expect(done).toEqual({
      finishReason: 'length',
      stoppedBy: null,
      text: ' they pref some',
      completionTokens: [408, 572, 470],
      usage: { promptTokens: 9, completionTokens: 3 },
      slot: 0,
      reusedTokens: 8,
      heldTokens: 12,
      // Sent at 0, the first token at 10: what came before the slot's 0.565 ms of prompt is the wait.
      timings: { queuedMs: expect.closeTo(9.435, 9), prefillMs: 0.565, prefillTokens: 1, decodeMs: 0.4, decodeTokensPerSecond: 5000 },
    });
  });

  it('says which stop string ended it, and that end-of-generation is a stop', () => {
    const word = tally(llamaServerDialect, [llamaTokenChunks[0], { ...llamaFinal, stop_type: 'word', stopping_word: 'school' }], prompt9).done;
    expect(word).toMatchObject({ finishReason: 'stop', stoppedBy: 'school' });
    expect(tally(llamaServerDialect, [{ ...llamaFinal, stop_type: 'eos' }], prompt9).done).toMatchObject({
      finishReason: 'stop',
      stoppedBy: null,
      completionTokens: [],
    });
  });

  it('names what is wrong with a malformed chunk, and passes an error event on as one', () => {
    expect(llamaServerDialect.read({ content: 5, stop: false })).toEqual({ ok: false, problem: expect.stringMatching(/^content: .*string.*got 5/) });
    expect(llamaServerDialect.read({ content: 'x', tokens: [-1], stop: false })).toMatchObject({ ok: false, problem: expect.stringContaining('tokens[0]') });
    const error = { error: { code: 500, message: 'The model produced output that does not match the expected Content-only format', type: 'server_error' } };
    expect(llamaServerDialect.read(error)).toEqual({ ok: true, value: { error } });
  });

  it('reads a token chunk beyond the ordinary one (probabilities, fields left out) as its schema does', () => {
    // With n_probs and post_sampling_probs (the shape this build sends): each token's probability and its top candidates.
    const withProbs = {
      ...llamaTokenChunks[0],
      completion_probabilities: [
        {
          id: 408,
          token: ' they',
          bytes: [32, 116, 104, 101, 121],
          prob: 0.5,
          top_probs: [
            { id: 408, token: ' they', bytes: [], prob: 0.5 },
            { id: 572, token: ' pref', bytes: [], prob: 0.25 },
          ],
        },
      ],
    };
    expect(llamaServerDialect.read(withProbs)).toEqual({
      ok: true,
      value: {
        tokens: {
          ids: [408],
          text: ' they',
          logprobs: [
            {
              token: 408,
              text: ' they',
              logprob: Math.log(0.5),
              top: [
                { token: 408, text: ' they', logprob: Math.log(0.5) },
                { token: 572, text: ' pref', logprob: Math.log(0.25) },
              ],
            },
          ],
        },
      },
    });
    // A chunk without its token ids (an older build) still hands on its text; an empty one hands on nothing.
    expect(llamaServerDialect.read({ content: ' they', stop: false })).toEqual({ ok: true, value: { tokens: { ids: [], text: ' they' } } });
    expect(llamaServerDialect.read({ ...llamaTokenChunks[0], content: '', tokens: [] })).toEqual({ ok: true, value: {} });
    expect(llamaServerDialect.read({ ...llamaTokenChunks[0], tokens: [408.5] })).toMatchObject({ ok: false, problem: expect.stringContaining('tokens[0]') });
  });

  it('maps /slots (recorded: one slot never used, one that served a request) to slot views', () => {
    const slots = [
      { id: 0, n_ctx: 1024, speculative: false, is_processing: false },
      {
        id: 1,
        n_ctx: 1024,
        speculative: false,
        is_processing: false,
        id_task: 6,
        n_prompt_tokens: 8,
        n_prompt_tokens_processed: 0,
        next_token: [{ has_next_token: false, n_remain: -1, n_decoded: 0 }],
      },
      { id: 2, n_ctx: 1024, is_processing: true, n_prompt_tokens: 40, next_token: [{ n_decoded: 0 }] },
      { id: 3, n_ctx: 1024, is_processing: true, n_prompt_tokens: 40, next_token: { n_decoded: 5 } },
    ];
    expect(llamaServerDialect.slots(slots)).toEqual({
      ok: true,
      value: [
        { slot: 0, state: 'idle', heldTokens: 0, conversationId: null, lastUsed: null },
        { slot: 1, state: 'idle', heldTokens: 8, conversationId: null, lastUsed: null },
        { slot: 2, state: 'prefill', heldTokens: 40, conversationId: null, lastUsed: null },
        { slot: 3, state: 'decode', heldTokens: 40, conversationId: null, lastUsed: null },
      ],
    });
  });

  it('sends the token ids as the prompt with cache_prompt and the sampling of the request', () => {
    const request = generateRequestSchema.parse({
      tokens: [1, 2, 3],
      maxTokens: 7,
      stop: ['END'],
      sampling: {
        temperature: 0,
        seed: 42,
        presencePenalty: 0.5,
        frequencyPenalty: -0.25,
        logitBias: [
          [5, 2.5],
          [6, -100],
        ],
      },
    });
    expect(llamaServerDialect.body(request, { model: null, contextSize: 1024 })).toEqual({
      prompt: [1, 2, 3],
      n_predict: 7,
      stream: true,
      cache_prompt: true,
      return_tokens: true,
      temperature: 0,
      top_k: 40,
      top_p: 0.95,
      min_p: 0.05,
      seed: 42,
      repeat_penalty: 1,
      repeat_last_n: 64,
      presence_penalty: 0.5,
      frequency_penalty: -0.25,
      logit_bias: [
        [5, 2.5],
        [6, false],
      ],
      stop: ['END'],
      ignore_eos: false,
    });
  });
});

// Recorded from a Manifold node (1 replica, tiny model): prompt [1, 300, 307, 314, 321], max_tokens 3, return_tokens.
const manifoldChunk = (text: string, tokens: number[]) => ({
  id: 'cmpl-1',
  object: 'text_completion',
  created: 1796315470,
  model: 'manifold-test-tiny-82fda828b820',
  choices: [{ index: 0, text, finish_reason: null, logprobs: null }],
  manifold: { tokens },
});
const manifoldChunks = [
  manifoldChunk('they', [408]),
  manifoldChunk(' they', [408]),
  manifoldChunk(' they', [408]),
  {
    id: 'cmpl-1',
    object: 'text_completion',
    created: 1796315470,
    model: 'manifold-test-tiny-82fda828b820',
    choices: [{ index: 0, text: '', finish_reason: 'length', logprobs: null }],
    manifold: {
      tokens: [408, 408, 408],
      replica: 0,
      slot: 0,
      failed_over: [],
      timings: { queued_ms: 2.31, cache_n: 0, prompt_n: 5, prompt_ms: 6.07, predicted_n: 3, predicted_ms: 5.98, predicted_per_second: 334.36 },
    },
  },
  {
    id: 'cmpl-1',
    object: 'text_completion',
    created: 1796315470,
    model: 'manifold-test-tiny-82fda828b820',
    choices: [],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 0 } },
  },
];

describe('when a stream may be read a gap apart', () => {
  const budget100 = (): GenerationTally => new GenerationTally(generateRequestSchema.parse({ tokens: prompt9, maxTokens: 100 }), 0);
  /** Adds `events` events of `perEvent` tokens, `everyMs` apart. */
  const stream = (t: GenerationTally, events: number, perEvent: number, everyMs: number, from = 10): number => {
    let at = from;
    for (let i = 0; i < events; i++) t.add({ tokens: { ids: Array(perEvent).fill(408), text: ' they'.repeat(perEvent) } }, (at += everyMs));
    return at;
  };

  it('once its pace is known, until two gaps of its token budget are left at that pace', () => {
    const t = budget100();
    expect(t.mayHold(16)).toBe(false);
    // A token every 2 ms: holding for 16 ms is allowed while more than 32 ms of tokens are left.
    const at = stream(t, 1, 1, 2);
    expect(t.mayHold(16)).toBe(false); // one event: no pace yet
    stream(t, 82, 1, 2, at);
    expect(t.mayHold(16)).toBe(true); // 83 tokens: 17 left, 34 ms
    stream(t, 1, 1, 2, at + 82 * 2);
    expect(t.mayHold(16)).toBe(false); // 84 tokens: 16 left, 32 ms
  });

  it('not for a stream whose events come fewer than two a gap, whatever they carry', () => {
    const slow = budget100();
    stream(slow, 10, 1, 20);
    expect(slow.mayHold(16)).toBe(false);
    // A peer that batches its own stream (a Manifold node): 4 tokens an event every 16 ms, every 9 ms, then every 8 ms.
    const batched = budget100();
    stream(batched, 5, 4, 16);
    expect(batched.mayHold(16)).toBe(false);
    const quicker = budget100();
    stream(quicker, 5, 4, 9);
    expect(quicker.mayHold(16)).toBe(false);
    const twoAGap = budget100();
    stream(twoAGap, 5, 4, 8);
    expect(twoAGap.mayHold(16)).toBe(true); // 20 tokens at 2 ms each: 80 left, 160 ms
  });

  it('not once the peer said it finished', () => {
    // llama-server's events, a token each 1 ms apart, then its last event, with 97 of the budget left.
    const t = budget100();
    const take = (chunk: unknown, at: number): void => {
      const read = llamaServerDialect.read(chunk);
      if (!read.ok) throw new Error(read.problem);
      t.add(read.value, at);
    };
    llamaTokenChunks.forEach((chunk, i) => take(chunk, 10 + i));
    expect(t.mayHold(16)).toBe(true);
    take(llamaFinal, 13);
    expect(t.mayHold(16)).toBe(false);
  });
});

describe("a Manifold node's /v1/completions stream", () => {
  it('hands on each token with its id and ends with the ids, the slot, the timings and the usage', () => {
    const { done, handedOn } = tally(manifoldDialect, manifoldChunks, [1, 300, 307, 314, 321]);
    expect(handedOn).toEqual([
      { tokens: [408], text: 'they' },
      { tokens: [408], text: ' they' },
      { tokens: [408], text: ' they' },
    ]);
    expect(done).toEqual({
      finishReason: 'length',
      stoppedBy: null,
      text: 'they they they',
      completionTokens: [408, 408, 408],
      usage: { promptTokens: 5, completionTokens: 3 },
      slot: 0,
      reusedTokens: 0,
      heldTokens: 8,
      // Sent at 0, the first token at 10: the node's own queue (2.31 ms), the hop and its front, besides its 6.07 ms of prompt.
      timings: { queuedMs: expect.closeTo(3.93, 9), prefillMs: 6.07, prefillTokens: 5, decodeMs: 5.98, decodeTokensPerSecond: 334.36 },
    });
  });

  it('maps its global slot view back to slot views', () => {
    const recorded = [
      { slot: 0, state: 'idle', heldTokens: 0, conversationId: null, lastUsed: null, replica: 0, replicaSlot: 0 },
      { slot: 1, state: 'decode', heldTokens: 12, conversationId: 'c1', lastUsed: 1796315470000, replica: 0, replicaSlot: 1 },
    ];
    expect(manifoldDialect.slots(recorded)).toEqual({ ok: true, value: recorded.map(({ replica: _r, replicaSlot: _s, ...view }) => view) });
    expect(manifoldDialect.slots([{ slot: 0, state: 'busy' }])).toMatchObject({ ok: false, problem: expect.stringContaining('[0].state') });
  });
});

// An OpenAI-style server (vLLM with prefix caching): text only, the stop string in stop_reason, usage last.
const vllmChunk = (text: string, finish: string | null = null, stopReason: string | null = null) => ({
  id: 'cmpl-9',
  object: 'text_completion',
  created: 1,
  model: 'org/model',
  choices: [{ index: 0, text, logprobs: null, finish_reason: finish, stop_reason: stopReason }],
  usage: null,
});

describe('an OpenAI-style stream (vLLM, SGLang)', () => {
  it('hands on text without ids, takes the cache hit from usage, and measures the timings itself', () => {
    const chunks = [
      vllmChunk('Hello'),
      vllmChunk(' world'),
      vllmChunk('', 'stop', 'END'),
      {
        id: 'cmpl-9',
        object: 'text_completion',
        created: 1,
        model: 'org/model',
        choices: [],
        usage: { prompt_tokens: 6, completion_tokens: 2, total_tokens: 8, prompt_tokens_details: { cached_tokens: 4 } },
      },
    ];
    const { done, handedOn } = tally(openAiDialect, chunks, [1, 2, 3, 4, 5, 6]);
    expect(handedOn).toEqual([
      { tokens: [], text: 'Hello' },
      { tokens: [], text: ' world' },
    ]);
    // Sent at 0; chunks at 10, 11, 12, 13: the first token 10 ms after sending, the second 1 ms later.
    expect(done).toEqual({
      finishReason: 'stop',
      stoppedBy: 'END',
      text: 'Hello world',
      completionTokens: [],
      usage: { promptTokens: 6, completionTokens: 2 },
      slot: null,
      reusedTokens: 4,
      heldTokens: 6,
      timings: { queuedMs: 0, prefillMs: 10, prefillTokens: 2, decodeMs: 1, decodeTokensPerSecond: 1000 },
    });
  });

  it('sends a token budget that fits what is left of the context, and no "no limit" budget when the context is unknown', () => {
    const request = generateRequestSchema.parse({ tokens: [1, 2, 3, 4], maxTokens: 1 << 20, sampling: { topK: 0, repeatPenalty: 1.1 } });
    const body = openAiDialect.body(request, { model: 'org/model', contextSize: 100 });
    expect(body).toMatchObject({
      model: 'org/model',
      prompt: [1, 2, 3, 4],
      max_tokens: 96,
      stream: true,
      stream_options: { include_usage: true },
      repetition_penalty: 1.1,
    });
    expect(body).not.toHaveProperty('top_k');
    expect(body).not.toHaveProperty('logit_bias');
    expect(openAiDialect.body(request, { model: null, contextSize: 0 })).not.toHaveProperty('max_tokens');
    const penalized = generateRequestSchema.parse({ tokens: [1], sampling: { presencePenalty: 1, frequencyPenalty: 0.5, logitBias: [[7, 3]] } });
    expect(openAiDialect.body(penalized, { model: null, contextSize: 0 })).toMatchObject({ presence_penalty: 1, frequency_penalty: 0.5, logit_bias: { 7: 3 } });
  });
});

describe("a peer's error answers", () => {
  it('lose the request to another replica for a 5xx, a 429 or an error event of the server, and refuse it for a 4xx', () => {
    const lost = peerRefusal(URL, 503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
    expect(lost).toBeInstanceOf(RemoteLostError);
    expect(lost).toBeInstanceOf(EngineExitedError);
    expect(lost.message).toBe('http://peer.test:8080: answered 503: Loading model');
    expect(peerRefusal(URL, 429, { error: { message: 'queue full' } })).toBeInstanceOf(RemoteLostError);
    expect(peerRefusal(URL, null, { error: { code: 500, message: 'The model produced output that does not match', type: 'server_error' } })).toBeInstanceOf(
      RemoteLostError,
    );
    expect(peerRefusal(URL, null, { error: { message: 'replica 0 died mid-stream', type: 'server_error', code: 'replica_died' } })).toBeInstanceOf(
      RemoteLostError,
    );
    // After the first tokens the peer is up and the answer failed (llama-server's parser on text it cannot read): not a lost replica.
    const unreadable = peerRefusal(
      URL,
      null,
      { error: { code: 500, message: 'The model produced output that does not match the expected Content-only format', type: 'server_error' } },
      true,
    );
    expect(unreadable).not.toBeInstanceOf(RemoteLostError);
    expect(unreadable).toMatchObject({ code: 'generate_failed', message: expect.stringContaining('does not match the expected Content-only format') });

    const tooLong = peerRefusal(URL, 400, {
      error: {
        code: 400,
        message: 'request (1101 tokens) exceeds the available context size (1024 tokens), try increasing it',
        type: 'exceed_context_size_error',
      },
    });
    expect(tooLong).toBeInstanceOf(EngineRequestError);
    expect(tooLong).toMatchObject({
      code: 'prompt_too_long',
      message: 'http://peer.test:8080: request (1101 tokens) exceeds the available context size (1024 tokens), try increasing it',
    });
    expect(
      peerRefusal(URL, 400, { error: { message: 'the prompt is 2000 tokens…', type: 'invalid_request_error', code: 'context_length_exceeded' } }),
    ).toMatchObject({ code: 'prompt_too_long' });
    expect(
      peerRefusal(URL, 400, { object: 'error', message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', code: 400 }),
    ).toMatchObject({ code: 'prompt_too_long' });
    expect(peerRefusal(URL, 400, { error: { code: 400, message: 'Prompt contains invalid tokens', type: 'invalid_request_error' } })).toMatchObject({
      code: 'bad_message',
      message: 'http://peer.test:8080: Prompt contains invalid tokens',
    });
    expect(peerRefusal(URL, 422, { detail: 'prompt: field required' })).toMatchObject({
      code: 'bad_message',
      message: 'http://peer.test:8080: prompt: field required',
    });
  });
});

describe('the model check', () => {
  const expected = { id: 'manifold-test-tiny-82fda828b820', vocabSize: 650, parameters: 461952 };
  const llamaModel = {
    id: '/models/manifold-test-tiny-82fda828b820.gguf',
    owned_by: 'llamacpp',
    meta: { n_vocab: 650, n_params: 461952, n_ctx_train: 4096, size: 1847808 },
  };

  it("accepts the peer's path to the same file, or the plan's name for it", () => {
    expect(matchPeerModel(URL, [llamaModel], expected, null)).toBe(llamaModel);
    const vllm = { id: 'org/tiny' };
    expect(matchPeerModel(URL, [{ id: 'other' }, vllm], expected, 'org/tiny')).toBe(vllm);
  });

  it('refuses another model, saying which one the peer serves', () => {
    expect(() => matchPeerModel(URL, [{ id: '/models/manifold-test-small-3ecb7c3afedf.gguf' }], expected, null)).toThrow(
      'http://peer.test:8080: serves "manifold-test-small-3ecb7c3afedf", not "manifold-test-tiny-82fda828b820"; point this replica at a server of the same model ' +
        '(if it is the same model under another name, set the replica\'s "model" to "/models/manifold-test-small-3ecb7c3afedf.gguf")',
    );
    expect(() => matchPeerModel(URL, [{ ...llamaModel, meta: { ...llamaModel.meta, n_vocab: 32000 } }], expected, null)).toThrow(
      'serves "manifold-test-tiny-82fda828b820" with a vocabulary of 32000 tokens, not the 650 of "manifold-test-tiny-82fda828b820"',
    );
    expect(() => matchPeerModel(URL, [{ ...llamaModel, meta: { ...llamaModel.meta, n_params: 7 } }], expected, null)).toThrow(
      'with 7 parameters, not the 461952',
    );
  });
});
